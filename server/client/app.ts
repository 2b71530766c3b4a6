/**
 * The little browser code labdeck needs beyond htmx: drag-and-drop method order (SortableJS, loaded as a
 * vendor script) and hide/show of methods. Bundled by esbuild into /static/app.js; no inline scripts (CSP).
 */
import { initExecution } from './execution.js';
import './builder/index.js'; // the workflow builder: starts itself on its page only
import './records.js'; // the record page's plot: starts itself on its page only
import './time.js'; // every <time data-local> in the viewer's time zone
import './campaign/index.js'; // the campaign page and the execution page's campaign plot: start themselves there only
declare const Sortable: {
  create(el: HTMLElement, opts: { handle: string; animation: number; onEnd: () => void }): unknown;
};

function sendJson(url: string, method: string, body: unknown) {
  return fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
}

function flash(message: string) {
  const el = document.createElement('div');
  el.className = 'alert alert-danger position-fixed bottom-0 end-0 m-3';
  el.setAttribute('role', 'alert');
  el.textContent = message;
  document.body.appendChild(el);
  setTimeout(() => el.remove(), 5000);
}

function initOrder() {
  const list = document.getElementById('methods');
  if (!list || typeof Sortable === 'undefined') return;
  const url = list.dataset.orderUrl!;
  Sortable.create(list, {
    handle: '.drag-handle',
    animation: 150,
    onEnd: () => {
      const order = [...list.querySelectorAll<HTMLElement>('.method-card')].map((c) => c.dataset.method!);
      sendJson(url, 'POST', { order }).then(
        (r) => {
          if (r.status !== 204) flash('Could not save the order.');
        },
        () => flash('Could not save the order: the server did not answer.'),
      );
    },
  });
}

function initHide() {
  document.addEventListener('click', (ev) => {
    const btn = (ev.target as HTMLElement).closest<HTMLButtonElement>('.toggle-hidden');
    if (!btn) return;
    const hidden = btn.dataset.hidden !== 'true';
    sendJson(btn.dataset.url!, 'PATCH', { hidden }).then(
      (r) => (r.ok ? location.reload() : flash("Could not change the method's visibility.")),
      () => flash('The server did not answer.'),
    );
  });
}

document.addEventListener('DOMContentLoaded', () => {
  initOrder();
  initHide();
  initExecution();
});
