/** Saving a workflow: the request and what its answer means, and what a first save changes on the page. */
import type { Workflow } from '../builder-model/index.js';
import { h } from './dom.js';
import type { Detail } from './errors.js';

/** Where workflows are: the list (POST a new one here), `base` + name (GET/PUT), `run` and `campaign` + name. */
export type Urls = { list: string; base: string; run: string; campaign: string };

/** The workflow as saved, or why it was not: the problems by field, and a line for the top. */
export type SaveAnswer = { saved: { name: string; version: number | null; workflow: unknown } } | { details: Detail[]; message: string };

/** PUT the workflow named `name`, or POST a new one (`name` null); rejects when the server does not answer. */
export async function sendWorkflow(urls: Urls, name: string | null, body: Workflow): Promise<SaveAnswer> {
  const isNew = name === null;
  const res = await fetch(isNew ? urls.list : `${urls.base}${encodeURIComponent(name)}`, {
    method: isNew ? 'POST' : 'PUT',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  const json = (await res.json().catch(() => null)) as { name?: string; version?: number; workflow?: unknown; error?: { message: string; details?: Detail[] } } | null;
  if (res.ok && json?.name) return { saved: { name: json.name, version: json.version ?? null, workflow: json.workflow } };
  return {
    details: json?.error?.details ?? [],
    message: res.status === 401 ? 'Not saved: you are logged out. Log in again in another tab, then save here.' : `Not saved: ${json?.error?.message ?? `the server answered ${res.status}`}`,
  };
}

/** After a save: the version shown; a new workflow has a name and an address now, and the page becomes its builder. */
export function showSaved(root: HTMLElement, urls: Urls, name: string, version: number | null, isNew: boolean) {
  const $ = <T extends Element = HTMLElement>(sel: string) => root.querySelector<T>(sel);
  $('#wf-version')!.textContent = `v${version}`;
  if (!isNew) return;
  const field = $<HTMLInputElement>('#wf-name')!;
  field.value = name;
  field.readOnly = true;
  field.title = 'A saved workflow keeps its name';
  history.replaceState(null, '', `${urls.base}${encodeURIComponent(name)}/builder`);
  if (!$('#wf-run')) {
    $('#wf-save')!.before(
      h('a', { id: 'wf-run', class: 'btn btn-outline-primary', href: `${urls.run}${encodeURIComponent(name)}` }, 'Run'),
      h('a', { id: 'wf-campaign', class: 'btn btn-outline-primary', href: `${urls.campaign}${encodeURIComponent(name)}` }, 'Optimize'),
    );
  }
  document.title = `Builder · ${name} · labdeck`;
}
