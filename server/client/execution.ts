/**
 * The execution page, live: the runner's state, progress, steps and log from the SSE stream
 * (/executions/events), the control buttons, and the queue's actions. Does nothing on other pages.
 */
import { availableControls, controlLabel, liveFlags, queueStatusLabel, runOutcome, SITUATION, situationOf, statusAlerts, taskNotice, type Control } from '../../core/runner/controls.js';
import { localClock } from './time.js';
import { showInputForm, type WaitingInput } from './input-form.js';
import { refreshTiming, watchTiming } from './timing.js';

type Status = {
  busy: boolean;
  state: 'idle' | 'running' | 'paused' | 'waiting_input' | 'failed' | 'stopping';
  paused: boolean;
  queue_held: boolean;
  current_task: null | { id: number; name: string; run_id: number | null };
  progress: { phase: string | null; iteration: number; iterations: number; step: number; steps: number };
  failed_step: null | { path: string; error: string };
  waiting: null | { path: string; message: string };
  input?: WaitingInput | null;
  interrupted: null | { task_id: number; remade?: string[]; retry?: 'step' | 'iteration' };
};
type Task = { id: number; name: string; status: string; workflow: string | null; iterations: number | null; run_id?: number | null };
type LastRun = { run_id: number; name: string; status: string; skipped: number };

const MAX_LINES = 200;

const $ = (id: string) => document.getElementById(id);

function el(tag: string, cls: string, text: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  e.textContent = text;
  return e;
}

function post(url: string, body?: unknown) {
  return fetch(url, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body ?? {}),
    credentials: 'same-origin',
  });
}

function getJson<T>(url: string): Promise<T | null> {
  return fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }).then((r) => (r.ok ? (r.json() as Promise<T>) : null));
}

function prepend(list: HTMLElement, item: HTMLElement) {
  list.prepend(item);
  while (list.children.length > MAX_LINES) list.lastElementChild?.remove();
}

function alertBox(kind: string, text: string) {
  const a = el('div', `alert alert-${kind} py-2`, text);
  a.setAttribute('role', kind === 'danger' ? 'alert' : 'status');
  return a;
}

/** What the page knows now: the runner's last status, the open tasks, names of tasks seen running. */
const view: { status: Status | null; tasks: Task[]; names: Map<number, string>; statuses: number } = { status: null, tasks: [], names: new Map(), statuses: 0 };

function showStatus(s: Status, base: string) {
  view.status = s;
  if (s.current_task) view.names.set(s.current_task.id, s.current_task.name);
  const where = situationOf(s);
  const state = $('live-state')!;
  state.textContent = SITUATION[where].label;
  state.dataset.situation = where;
  state.className = `badge text-bg-${SITUATION[where].tone}`;
  $('live-flags')!.textContent = liveFlags(s, where);
  const on = availableControls(s);
  document.querySelectorAll<HTMLButtonElement>('[data-control-name]').forEach((b) => {
    b.disabled = !on[b.dataset.controlName as Control];
    b.textContent = controlLabel(b.dataset.controlName as Control, s);
  });
  const task = $('live-task')!;
  task.textContent = '';
  if (s.current_task) {
    task.append(el('strong', '', s.current_task.name), ` · task ${s.current_task.id}`);
    if (s.current_task.run_id) {
      const a = el('a', '', `run ${s.current_task.run_id}`) as HTMLAnchorElement;
      a.href = `${base}executions/records/${s.current_task.run_id}`;
      task.append(' · ', a);
    }
  } else task.textContent = 'No task running.';
  const p = s.progress;
  const pct = s.current_task && p.iterations ? Math.min(100, Math.round(((p.iteration - 1 + (p.steps ? p.step / p.steps : 0)) / p.iterations) * 100)) : 0;
  ($('live-bar') as HTMLElement).style.width = `${pct}%`;
  $('live-bar')!.parentElement!.setAttribute('aria-valuenow', String(pct));
  $('live-progress')!.textContent = s.current_task ? `iteration ${p.iteration} of ${p.iterations} · ${p.phase ?? ''} step ${Math.min(p.step + 1, p.steps)} of ${p.steps}` : '';
  $('live-alert')!.replaceChildren(...statusAlerts(s).map((a) => alertBox(a.tone, a.text)));
  const inputBox = $('live-input');
  if (inputBox) showInputForm(inputBox, s.input, `${base}executions/input`);
  // the queue's labels follow the runner: the running task says paused, failed, stopping…
  document.querySelectorAll<HTMLElement>('#queue-rows tr[data-task]').forEach((tr) => {
    const t = view.tasks.find((x) => String(x.id) === tr.dataset.task);
    const cell = tr.querySelector('.queue-status');
    if (t && cell) cell.textContent = queueStatusLabel(t, s);
  });
  showNotice(base);
}

/** The last run that ended, linked to its record. */
function showLastRun(run: LastRun | null, base: string) {
  const box = $('live-last');
  if (!box || !run) return;
  const a = el('a', '', `run ${run.run_id}`) as HTMLAnchorElement;
  a.href = `${base}executions/records/${run.run_id}`;
  box.replaceChildren('Last run: ', a, ` (${run.name}) ${runOutcome(run.status, run.skipped)}.`);
  box.classList.remove('d-none');
}

/**
 * The note about the task the form just queued (#run-notice): it follows the task (queued, running, paused,
 * failed step…) and, once it ends, says how and links its record. Its data-* attributes hold what is known.
 */
function showNotice(base: string) {
  const box = $('run-notice');
  if (!box || !view.status) return;
  const task = { id: Number(box.dataset.task), name: box.dataset.name ?? '', status: box.dataset.status ?? 'pending', run_id: box.dataset.run ? Number(box.dataset.run) : null };
  const n = taskNotice(task, view.status);
  box.className = `alert alert-${n.tone}`;
  const text = el('span', 'run-notice-text', n.text);
  if (n.run_id === null) return void box.replaceChildren(text);
  const a = el('a', 'run-notice-link', `Its record: run ${n.run_id}`) as HTMLAnchorElement;
  a.href = `${base}executions/records/${n.run_id}`;
  box.replaceChildren(text, ' ', a);
}

/** What is now known of the noticed task (from an event, the queue, or the task itself). */
function noteTask(id: number, patch: { status?: string; run_id?: number | null }, base: string) {
  const box = $('run-notice');
  if (!box || Number(box.dataset.task) !== id) return;
  if (patch.status) box.dataset.status = patch.status;
  if (patch.run_id) box.dataset.run = String(patch.run_id);
  showNotice(base);
}

/** The noticed task is no longer in the open queue: ask how it ended (an event may have been missed). */
async function settleNotice(base: string) {
  const box = $('run-notice');
  if (!box || !['pending', 'running'].includes(box.dataset.status ?? '')) return;
  const id = Number(box.dataset.task);
  const open = view.tasks.find((t) => t.id === id);
  if (open) return noteTask(id, { status: open.status, run_id: open.run_id ?? null }, base);
  const t = await getJson<Task>(`${base}executions/queue/task/${id}`);
  if (t) noteTask(id, { status: t.status, run_id: t.run_id ?? null }, base);
}

function queueRow(t: Task, base: string): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.task = String(t.id);
  for (const v of [String(t.id), t.name, t.workflow ?? '', String(t.iterations ?? '')]) tr.append(el('td', '', v));
  tr.append(el('td', 'queue-status', view.status ? queueStatusLabel(t, view.status) : t.status));
  const actions = el('td', 'text-end text-nowrap', '');
  if (t.status === 'pending') {
    const btn = (label: string, title: string, run: () => Promise<Response>) => {
      const b = el('button', 'btn btn-sm btn-link py-0', label) as HTMLButtonElement;
      b.type = 'button';
      b.title = title;
      b.addEventListener('click', () => void run().then((r) => (r.ok ? refreshQueue(base) : r.json().then((j) => window.alert(j.error?.message ?? 'failed')))));
      actions.append(b);
    };
    btn('↑', 'Move up', () => post(`${base}executions/queue/reorder`, { id: t.id, direction: 'up' }));
    btn('↓', 'Move down', () => post(`${base}executions/queue/reorder`, { id: t.id, direction: 'down' }));
    btn('Rename', 'Rename', () => {
      const name = window.prompt('New name', t.name);
      return name ? post(`${base}executions/queue/task/rename`, { id: t.id, new_name: name }) : Promise.resolve(new Response(null, { status: 204 }));
    });
    btn('Delete', 'Remove from the queue', () =>
      window.confirm(`Remove task ${t.id} (${t.name}) from the queue?`) ? post(`${base}executions/queue/delete`, { id: t.id }) : Promise.resolve(new Response(null, { status: 204 })),
    );
  }
  tr.append(actions);
  return tr;
}

async function refreshQueue(base: string) {
  const r = await fetch(`${base}executions/queue`, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  if (!r.ok) return;
  const q = (await r.json()) as { tasks: Task[] };
  view.tasks = q.tasks;
  for (const t of q.tasks) view.names.set(t.id, t.name);
  const body = $('queue-rows')!;
  body.replaceChildren(...q.tasks.map((t) => queueRow(t, base)));
  $('queue-empty')?.classList.toggle('d-none', q.tasks.length > 0);
  await settleNotice(base);
}

function initControls(base: string) {
  document.querySelectorAll<HTMLButtonElement>('[data-control]').forEach((b) =>
    b.addEventListener('click', () => {
      if (b.dataset.confirm && !window.confirm(b.dataset.confirm)) return;
      const seen = view.statuses;
      // with several tasks running (lab serve --parallel N) the buttons act on the one shown: the first
      const shown = view.status as { current_task: { id: number } | null; running?: unknown[] } | null;
      const several = (shown?.running?.length ?? 0) > 1 && shown?.current_task && !b.dataset.control!.endsWith('/release'); // release is the queue's
      void post(b.dataset.control!, several ? { task_id: shown.current_task!.id } : undefined).then(async (r) => {
        const j = await r.json().catch(() => ({}));
        // the answer is the status after: shown at once, unless the stream has told newer since (a short run's
        // cleanup and end can come before this answer; the runner streams every change of its status)
        // (an answer that came after newer news is a success all the same: never reported as a failure)
        if (!r.ok) $('live-alert')!.prepend(alertBox('secondary', j.error?.message ?? `Failed (${r.status}).`));
        else if (view.statuses === seen) showStatus(j as Status, base);
      });
    }),
  );
}

function initAddRow() {
  const table = $('config-rows');
  const add = $('add-row');
  if (!table || !add) return;
  add.addEventListener('click', () => {
    const params = JSON.parse(table.dataset.params ?? '[]') as string[];
    const body = table.querySelector('tbody')!;
    const i = body.children.length;
    const tr = document.createElement('tr');
    for (const p of params) {
      const td = document.createElement('td');
      const input = document.createElement('input');
      input.className = 'form-control form-control-sm';
      input.name = `rows[${i}][${p}]`;
      input.setAttribute('aria-label', `row ${i + 1} ${p}`);
      td.append(input);
      tr.append(td);
    }
    body.append(tr);
  });
}

export function initExecution() {
  const live = $('live');
  if (!live) return;
  const base = live.dataset.base!;
  // the status the server rendered the page with, until the stream's hello
  if (live.dataset.status) view.status = JSON.parse(live.dataset.status) as Status;
  initControls(base);
  initAddRow();
  void refreshQueue(base);
  const steps = $('live-steps')!;
  const log = $('live-log')!;
  const source = new EventSource(live.dataset.events!);
  const onStatus = (e: MessageEvent) => {
    view.statuses++;
    showStatus(JSON.parse(e.data).status as Status, base);
  };
  /** A line of a run another labdeck runs (relayed from it) says which. */
  const onHost = (li: HTMLElement, host?: string) => {
    if (host) li.append(el('span', 'badge text-bg-secondary ms-2 live-host', `on ${host}`));
    return li;
  };
  const logLine = (d: { level: string; message: string; at: string; host?: string }) =>
    prepend(log, onHost(el('li', d.level === 'error' ? 'text-danger' : d.level === 'warn' ? 'text-warning-emphasis' : '', `${localClock(d.at)} ${d.message}`), d.host));
  source.addEventListener('hello', (e) => {
    onStatus(e as MessageEvent);
    const hello = JSON.parse((e as MessageEvent).data);
    showLastRun(hello.last_run ?? null, base);
    void refreshQueue(base); // after a reconnect: what changed while the stream was down
    log.replaceChildren();
    steps.replaceChildren();
    for (const d of hello.log ?? []) logLine(d);
    for (const d of hello.steps ?? []) stepLine(d);
  });
  source.addEventListener('status', onStatus);
  source.addEventListener('queue', () => void refreshQueue(base));
  source.addEventListener('log', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as { level: string; message: string; at: string; host?: string };
    logLine(d);
    if (d.level === 'warn') refreshTiming(); // the watchdog's "Overdue" line: the step is marked
  });
  source.addEventListener('step', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Parameters<typeof stepLine>[0];
    stepLine(d);
    if (d.kind === 'call') refreshTiming(); // a step started or ended: its expected end comes or goes
  });
  source.addEventListener('hello', () => refreshTiming());
  watchTiming(() => view.status?.busy === true);
  function stepLine(d: { state: string; instrument?: string; method?: string; kind: string; phase: string; iteration: number | null; path: string; output?: unknown; error?: string; host?: string }) {
    if (d.state === 'start') return;
    const what = d.instrument ? `${d.instrument}.${d.method}` : d.kind;
    const where = `${d.phase}${d.iteration === null ? '' : ` ${d.iteration + 1}`} · ${d.path}`;
    const text = d.state === 'ok' ? `✓ ${what} → ${JSON.stringify(d.output ?? null)}` : `✗ ${what}: ${d.error}`;
    const li = el('li', d.state === 'ok' ? '' : 'text-danger', text);
    li.prepend(el('span', 'text-body-secondary me-2', where));
    li.dataset.state = d.state;
    prepend(steps, onHost(li, d.host));
  }
  source.addEventListener('run', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as { run_id: number; task_id: number; status: string; skipped?: number };
    noteTask(d.task_id, { status: d.status, run_id: d.run_id }, base);
    refreshTiming(); // a run's ETA comes or goes
    if (d.status === 'running') return;
    prepend(log, el('li', 'fw-semibold', `run ${d.run_id}: ${runOutcome(d.status, d.skipped)}`));
    showLastRun({ run_id: d.run_id, name: view.names.get(d.task_id) ?? `task ${d.task_id}`, status: d.status, skipped: d.skipped ?? 0 }, base);
  });
}
