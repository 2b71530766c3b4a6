/**
 * The workflow builder page (server/views/workflows.tsx renders its skeleton and a JSON data island; page.ts
 * runs it) and the delete button of a workflow's page. Plain DOM code. Does nothing on pages without them.
 */
import { Builder, type Data } from './page.js';

/** The Delete button of a workflow's page. */
function initDelete() {
  document.addEventListener('click', async (e) => {
    const btn = (e.target as HTMLElement).closest<HTMLButtonElement>('[data-wf-delete]');
    if (!btn) return;
    if (!window.confirm(`Delete the workflow "${btn.dataset.wfName}" and all its versions? Its past runs keep their own copy.`)) return;
    btn.disabled = true;
    const res = await fetch(btn.dataset.wfDelete!, { method: 'DELETE', headers: { Accept: 'application/json' }, credentials: 'same-origin' }).catch(() => null);
    if (res?.ok) location.assign(btn.dataset.wfList!);
    else {
      btn.disabled = false;
      window.alert('The workflow could not be deleted.');
    }
  });
}

export function initBuilder() {
  initDelete();
  const root = document.getElementById('wf-builder');
  const island = document.getElementById('wf-data');
  if (!root || !island) return;
  new Builder(root, JSON.parse(island.textContent ?? '{}') as Data).start();
}

document.addEventListener('DOMContentLoaded', initBuilder);
