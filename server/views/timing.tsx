/**
 * The run page's timing (docs/notifications.md, the watchdog): each running run's ETA and each running call
 * step's expected end, an overdue step marked. Rendered with the page; kept current by the page script
 * (server/client/timing.ts) from `GET /executions/status`, with the same words (core/notify/timing-view.ts).
 */
import { timingLines, utcClock, type Timing } from '../../core/notify/timing-view.js';

export function LiveTiming({ timing, statusUrl }: { timing: Timing | null; statusUrl: string }) {
  const lines = timingLines(timing, utcClock);
  return (
    <ul id="live-timing" data-status-url={statusUrl} className={`small list-unstyled mb-2${lines.length ? '' : ' d-none'}`}>
      {lines.map((l) => (
        <li
          key={`${l.kind}-${l.id}`}
          data-kind={l.kind}
          data-id={l.id}
          data-overdue={l.kind === 'step' ? String(l.overdue) : undefined}
          className={l.overdue ? 'text-danger fw-semibold' : 'text-body-secondary'}
        >
          {l.overdue ? <span className="badge text-bg-danger me-1">overdue</span> : null}
          {l.text}
        </li>
      ))}
    </ul>
  );
}
