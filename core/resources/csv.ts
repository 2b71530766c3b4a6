/** Resources as CSV (core/files/csv.ts reads and writes, neutralising formulas): one row per resource. */
import { parseCsv as readCsv, toCsv as writeCsv } from '../files/csv.js';
import type { ResourceRow } from '../store/types.js';

export const RESOURCE_COLUMNS = ['name', 'kind', 'quantity', 'unit', 'rows', 'columns', 'location', 'identity', 'in_doubt'] as const;

export function toCsv(rows: readonly ResourceRow[]): string {
  return writeCsv(
    rows.map((r) => ({
      name: r.name,
      kind: r.kind,
      quantity: r.quantity,
      unit: r.unit,
      rows: r.rows ?? '',
      columns: r.columns ?? '',
      location: r.location ?? '',
      identity: r.identity ?? '',
      in_doubt: r.inDoubt,
    })),
    RESOURCE_COLUMNS,
  );
}

/** The rows of an uploaded file, each with the line it starts on (in_doubt is the export's, not read back). */
export function parseCsv(text: string): { line: number; cells: Record<string, unknown> }[] {
  const t = readCsv(text);
  return t.rows.map((row, i) => {
    const cells: Record<string, unknown> = {};
    for (const c of RESOURCE_COLUMNS) if (c !== 'in_doubt' && row[c] !== undefined) cells[c] = row[c];
    return { line: t.lines[i] ?? i + 2, cells };
  });
}
