/**
 * A record's timing list (docs/notifications.md, "The watchdog"): each call step of the phases shown with its
 * duration, the bound the watchdog had learned for it when it started (core/records/timing.ts), and an
 * overdue mark for a step that ran longer than that.
 */
import type { RecordPhase } from '../../core/records/index.js';
import { formatDuration } from './record-parts.js';

const INPUT = '(input)';

export function TimingList({ phases }: { phases: RecordPhase[] }) {
  const steps = phases.flatMap((p) => p.steps.map((s) => ({ ...s, where: p.iteration === null ? p.phase : `${p.phase} · iteration ${p.iteration + 1}` }))).filter((s) => s.instrument !== INPUT);
  if (steps.length === 0) return null;
  const over = steps.filter((s) => s.overdue).length;
  const learned = steps.filter((s) => s.bound_ms !== null).length;
  return (
    <section className="mb-4" id="record-timing-section">
      <h2 className="h5">Timing</h2>
      <p className="small text-body-secondary" id="record-timing-summary">
        {over
          ? `${over} of ${steps.length} call step${steps.length === 1 ? '' : 's'} ran longer than the bound the watchdog had learned for ${over === 1 ? 'it' : 'them'}`
          : `No call step ran longer than its bound`}
        {learned < steps.length ? ` (${steps.length - learned} had no bound yet: too few past calls of their method)` : ''}. The bound is max(factor × median, median + mad_factor × MAD, floor) of the
        earlier successful calls of the same instrument and method, with the lab&apos;s watchdog settings as they are now.
      </p>
      <div className="table-responsive">
        <table className="table table-sm align-middle small" id="record-timing">
          <thead>
            <tr>
              <th scope="col">Phase</th>
              <th scope="col">Path</th>
              <th scope="col">Call</th>
              <th scope="col" className="text-end">
                Duration
              </th>
              <th scope="col" className="text-end">
                Bound
              </th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {steps.map((s) => (
              <tr key={s.task_id} data-step={s.task_id} data-overdue={String(s.overdue)} className={s.overdue ? 'text-danger fw-semibold' : undefined}>
                <td>{s.where}</td>
                <td>{s.path ? <code className="small">{s.path}</code> : '—'}</td>
                <td>
                  <code>
                    {s.instrument}.{s.method}
                  </code>
                </td>
                <td className="text-end text-nowrap">{s.duration_ms === null ? (s.status === 'running' ? 'running' : '—') : formatDuration(s.duration_ms)}</td>
                <td className="text-end text-nowrap">{s.bound_ms === null ? <span className="text-body-secondary">none yet</span> : formatDuration(s.bound_ms)}</td>
                <td>{s.overdue ? <span className="badge text-bg-danger">overdue</span> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
