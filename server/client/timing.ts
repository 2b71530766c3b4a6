/**
 * The run page's timing, live (server/views/timing.tsx): each run's ETA and each running call step's expected
 * end, an overdue one marked, read from `GET /executions/status` when a step or run starts or ends, when a
 * warning (the watchdog's "Overdue" line) is logged, and every 10 s while something runs.
 */
import { timingLines, type Timing } from '../../core/notify/timing-view.js';
import { localClock } from './time.js';

let pending: Promise<void> | null = null;
let again = false;

function draw(box: HTMLElement, timing: Timing | null) {
  const lines = timingLines(timing, (iso) => localClock(iso));
  box.replaceChildren(
    ...lines.map((l) => {
      const li = document.createElement('li');
      li.dataset.kind = l.kind;
      li.dataset.id = String(l.id);
      if (l.kind === 'step') li.dataset.overdue = String(l.overdue);
      li.className = l.overdue ? 'text-danger fw-semibold' : 'text-body-secondary';
      if (l.overdue) {
        const badge = document.createElement('span');
        badge.className = 'badge text-bg-danger me-1';
        badge.textContent = 'overdue';
        li.append(badge);
      }
      li.append(l.text);
      return li;
    }),
  );
  box.classList.toggle('d-none', lines.length === 0);
}

/** Read the timing again (one request at a time; a call while one is out asks once more after it). */
export function refreshTiming(): void {
  const box = document.getElementById('live-timing');
  if (!box?.dataset.statusUrl) return;
  if (pending) {
    again = true;
    return;
  }
  pending = fetch(box.dataset.statusUrl, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
    .then((r) => (r.ok ? (r.json() as Promise<{ timing?: Timing }>) : null))
    .then((s) => {
      if (s) draw(box, s.timing ?? null);
    })
    .catch(() => undefined)
    .finally(() => {
      pending = null;
      if (again) {
        again = false;
        refreshTiming();
      }
    });
}

/** Every 10 s while `busy()` says something runs (an overdue step is marked even without a new event). */
export function watchTiming(busy: () => boolean): void {
  setInterval(() => {
    if (busy() && document.visibilityState !== 'hidden') refreshTiming();
  }, 10_000);
}
