/**
 * An instrument's result as a person reads it: a dict (the usual Python driver result) as a small table of
 * its fields, a list as a small table of its items, a list of numbers as an inline SVG sparkline with its
 * count and range; anything else as JSON. Server-rendered through JSX, so every text is escaped; the SVG is
 * drawn with attributes only (no inline style, which the CSP refuses).
 */
import { cutText, isCutResult } from '../../core/result-limit.js';

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumbers = (v: unknown): v is number[] => Array.isArray(v) && v.length >= 2 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** A number as a person reads it: 6 significant digits. */
const readable = (n: number) => (Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6))));

/** One cell: short JSON, cut at `max` characters (the full text in its title). */
function Cell({ value, max }: { value: unknown; max: number }) {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const text = readable(value);
    return <code className="json">{text === String(value) ? text : <span title={String(value)}>{text}</span>}</code>;
  }
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  if (text.length <= max) return <span className="value-text">{text}</span>;
  return (
    <span className="value-text" title={text.slice(0, 4000)}>
      {`${text.slice(0, max)}…`}
    </span>
  );
}

/** An inline sparkline of a list of numbers (at most `points` of them drawn, evenly picked). */
export function Sparkline({ values, width = 120, height = 24, points = 200 }: { values: number[]; width?: number; height?: number; points?: number }) {
  const step = Math.max(1, Math.ceil(values.length / points));
  const drawn = values.filter((_, i) => i % step === 0 || i === values.length - 1);
  const lo = Math.min(...drawn);
  const hi = Math.max(...drawn);
  const x = (i: number) => ((i / Math.max(1, drawn.length - 1)) * (width - 2) + 1).toFixed(1);
  const y = (v: number) => (hi === lo ? height / 2 : height - 1 - ((v - lo) / (hi - lo)) * (height - 2)).toFixed(1);
  const label = `${values.length} numbers from ${readable(Math.min(...values))} to ${readable(Math.max(...values))}`;
  return (
    <svg className="sparkline" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label}>
      <title>{label}</title>
      <polyline fill="none" stroke="currentColor" strokeWidth="1.5" points={drawn.map((v, i) => `${x(i)},${y(v)}`).join(' ')} />
    </svg>
  );
}

/**
 * A value: a dict or a list as a small table (at most `rows` rows, then how many more), a list of numbers
 * as a sparkline; a scalar as its text. `compact` (the recent-calls table): shorter cells, no nested tables.
 */
export function ValueView({ value, compact = false, rows = compact ? 6 : 20 }: { value: unknown; compact?: boolean; rows?: number }) {
  const max = compact ? 40 : 120;
  if (isCutResult(value)) {
    // a result over the bound, or more than this list reads of it (core/result-limit.ts): its size and its start
    return (
      <span className="value-cut">
        <span className="badge text-bg-warning me-1">cut</span>
        <span className="small text-body-secondary">{cutText(value)}</span> <Cell value={value.preview} max={max} />
      </span>
    );
  }
  if (isNumbers(value)) {
    return (
      <span className="value-series">
        <Sparkline values={value} />{' '}
        <span className="small text-body-secondary">
          {value.length} values, {readable(Math.min(...value))} … {readable(Math.max(...value))}
        </span>
      </span>
    );
  }
  const entries: [string, unknown][] | null = isDict(value) ? Object.entries(value) : Array.isArray(value) ? value.map((v, i) => [String(i), v]) : null;
  if (!entries) return value === undefined ? <span className="text-body-secondary">—</span> : <Cell value={value} max={max * 2} />;
  if (entries.length === 0) return <code className="json">{Array.isArray(value) ? '[]' : '{}'}</code>;
  const shown = entries.slice(0, rows);
  return (
    <table className={`table table-sm table-borderless value-table mb-0${compact ? ' value-table-compact' : ''}`}>
      <tbody>
        {shown.map(([k, v]) => (
          <tr key={k}>
            <th scope="row" className="fw-normal text-body-secondary">
              {k}
            </th>
            <td>{isNumbers(v) ? <Sparkline values={v} /> : <Cell value={v} max={max} />}</td>
          </tr>
        ))}
        {entries.length > shown.length ? (
          <tr>
            <td colSpan={2} className="text-body-secondary">
              and {entries.length - shown.length} more
            </td>
          </tr>
        ) : null}
      </tbody>
    </table>
  );
}
