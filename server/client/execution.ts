/**
 * The execution page, live: the runner's state, progress, steps and log from the SSE stream
 * (/executions/events), the control buttons, and the queue's actions. Does nothing on other pages.
 */
type Status = {
  busy: boolean;
  state: string;
  paused: boolean;
  queue_held: boolean;
  current_task: null | { id: number; name: string; run_id: number | null };
  progress: { phase: string | null; iteration: number; iterations: number; step: number; steps: number };
  failed_step: null | { path: string; error: string };
  waiting: null | { path: string; message: string };
  interrupted: null | { task_id: number };
};
type Task = { id: number; name: string; status: string; workflow: string | null; iterations: number | null };

const STATE_CLASS: Record<string, string> = { idle: 'secondary', running: 'primary', paused: 'warning', failed: 'danger', stopping: 'dark' };
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

function prepend(list: HTMLElement, item: HTMLElement) {
  list.prepend(item);
  while (list.children.length > MAX_LINES) list.lastElementChild?.remove();
}

function alertBox(kind: string, text: string) {
  const a = el('div', `alert alert-${kind} py-2`, text);
  a.setAttribute('role', kind === 'danger' ? 'alert' : 'status');
  return a;
}

function showStatus(s: Status, base: string) {
  const state = $('live-state')!;
  state.textContent = s.state;
  state.className = `badge text-bg-${STATE_CLASS[s.state] ?? 'secondary'}`;
  $('live-flags')!.textContent = [s.paused ? 'pause set' : '', s.queue_held ? 'queue held' : ''].filter(Boolean).join(' · ');
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
  const pct = s.current_task && p.iterations ? Math.min(100, Math.round(((p.iteration - 1 + (p.steps ? p.step / p.steps : 0)) / p.iterations) * 100)) : s.current_task ? 0 : 0;
  ($('live-bar') as HTMLElement).style.width = `${pct}%`;
  $('live-bar')!.parentElement!.setAttribute('aria-valuenow', String(pct));
  $('live-progress')!.textContent = s.current_task ? `iteration ${p.iteration} of ${p.iterations} · ${p.phase ?? ''} step ${Math.min(p.step + 1, p.steps)} of ${p.steps}` : '';
  const box = $('live-alert')!;
  box.textContent = '';
  if (s.failed_step) box.append(alertBox('danger', `Step ${s.failed_step.path} failed: ${s.failed_step.error}. Retry it, skip it (pause/resume), or abort.`));
  if (s.waiting) box.append(alertBox('warning', `${s.waiting.message} (pause/resume to continue)`));
  if (s.interrupted) box.append(alertBox('warning', `Task ${s.interrupted.task_id} was interrupted when labdeck stopped: retry re-runs its in-doubt step, pause/resume goes on after it, abort ends it.`));
}

function queueRow(t: Task, base: string): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.task = String(t.id);
  for (const v of [String(t.id), t.name, t.workflow ?? '', String(t.iterations ?? ''), t.status]) tr.append(el('td', '', v));
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
  const body = $('queue-rows')!;
  body.replaceChildren(...q.tasks.map((t) => queueRow(t, base)));
  $('queue-empty')?.classList.toggle('d-none', q.tasks.length > 0);
}

function initControls() {
  document.querySelectorAll<HTMLButtonElement>('[data-control]').forEach((b) =>
    b.addEventListener('click', () => {
      if (b.dataset.confirm && !window.confirm(b.dataset.confirm)) return;
      void post(b.dataset.control!).then(async (r) => {
        if (!r.ok) {
          const j = await r.json().catch(() => ({}));
          $('live-alert')!.prepend(alertBox('secondary', j.error?.message ?? `Failed (${r.status}).`));
        }
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
  initControls();
  initAddRow();
  void refreshQueue(base);
  const steps = $('live-steps')!;
  const log = $('live-log')!;
  const source = new EventSource(live.dataset.events!);
  const onStatus = (e: MessageEvent) => showStatus(JSON.parse(e.data).status as Status, base);
  const logLine = (d: { level: string; message: string; at: string }) =>
    prepend(log, el('li', d.level === 'error' ? 'text-danger' : d.level === 'warn' ? 'text-warning-emphasis' : '', `${d.at.slice(11, 19)} ${d.message}`));
  source.addEventListener('hello', (e) => {
    onStatus(e as MessageEvent);
    const hello = JSON.parse((e as MessageEvent).data);
    log.replaceChildren();
    steps.replaceChildren();
    for (const d of hello.log ?? []) logLine(d);
    for (const d of hello.steps ?? []) stepLine(d);
  });
  source.addEventListener('status', onStatus);
  source.addEventListener('queue', () => void refreshQueue(base));
  source.addEventListener('log', (e) => logLine(JSON.parse((e as MessageEvent).data)));
  source.addEventListener('step', (e) => stepLine(JSON.parse((e as MessageEvent).data)));
  function stepLine(d: { state: string; instrument?: string; method?: string; kind: string; phase: string; iteration: number | null; path: string; output?: unknown; error?: string }) {
    if (d.state === 'start') return;
    const what = d.instrument ? `${d.instrument}.${d.method}` : d.kind;
    const where = `${d.phase}${d.iteration === null ? '' : ` ${d.iteration + 1}`} · ${d.path}`;
    const text = d.state === 'ok' ? `✓ ${what} → ${JSON.stringify(d.output ?? null)}` : `✗ ${what}: ${d.error}`;
    const li = el('li', d.state === 'ok' ? '' : 'text-danger', text);
    li.prepend(el('span', 'text-body-secondary me-2', where));
    li.dataset.state = d.state;
    prepend(steps, li);
  }
  source.addEventListener('run', (e) => {
    const d = JSON.parse((e as MessageEvent).data);
    if (d.status !== 'running') prepend(log, el('li', 'fw-semibold', `run ${d.run_id}: ${d.status}`));
  });
}
