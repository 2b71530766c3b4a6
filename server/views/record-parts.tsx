/**
 * What the records list and a record's page both show: a run's or a step's status, a duration, a value as
 * short JSON, the link to a record.
 */
import { LocalTime, type ViewCtx } from './layout.js';

const STATUS_BADGE: Record<string, string> = {
  running: 'primary',
  completed: 'success',
  failed: 'danger',
  stopped: 'secondary',
  aborted: 'warning',
  interrupted: 'warning',
  ok: 'success',
  error: 'danger',
  skipped: 'secondary',
  'in-doubt': 'warning',
  blocked: 'danger',
};

export function StatusBadge({ status }: { status: string | null }) {
  if (!status) return null;
  return <span className={`badge text-bg-${STATUS_BADGE[status] ?? 'secondary'}`}>{status}</span>;
}

/** A run's status: "completed with 1 skipped step" is never the green of a clean run. */
export function RunStatusBadge({ status, skipped }: { status: string; skipped: number }) {
  if (!skipped) return <StatusBadge status={status} />;
  return (
    <span className="badge text-bg-warning" title="A failed step was skipped: the iterations marked skipped are not data">
      {status} with {skipped} skipped step{skipped === 1 ? '' : 's'}
    </span>
  );
}

export const Time = LocalTime;

/** 850 ms, 12.3 s, 4 min 05 s, 2 h 03 min. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A value as short JSON text (the full text in the tooltip when it is cut). */
/** A number as a person reads it: 6 significant digits (the exact value is in the title, the JSON and the CSVs). */
const readable = (_k: string, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) && Number.isFinite(v) ? Number(v.toPrecision(6)) : v);

export function Json({ value, max = 120 }: { value: unknown; max?: number }) {
  if (value === undefined || value === null) return <span className="text-body-secondary">—</span>;
  const exact = JSON.stringify(value) ?? String(value);
  const text = JSON.stringify(value, readable) ?? exact;
  if (text.length <= max)
    return text === exact ? (
      <code className="json">{text}</code>
    ) : (
      <code className="json" title={exact.slice(0, 4000)}>
        {text}
      </code>
    );
  return (
    <code className="json" title={exact.slice(0, 4000)}>
      {`${text.slice(0, max)}…`}
    </code>
  );
}

export const recordUrl = (ctx: ViewCtx, id: number, rest = '') => ctx.url(`/executions/records/${id}${rest}`);
