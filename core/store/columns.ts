/**
 * The words a table's columns are written in, the same for SQLite and PostgreSQL: the migrations
 * (migrations/ddl.ts) and the tables as they are now (tables.ts) both use them, and this file alone says
 * what each is on each dialect.
 *
 *   id      the row id, auto-increment primary key (SQLite integers are 64-bit; PostgreSQL `serial`)
 *   bigid   an id that may pass 2^31 (calls, log lines): PostgreSQL `bigserial`
 *   text    text, JSON included (encoded and parsed by the repositories)
 *   int     an integer; `bigint` one that may pass 2^31 (a file's size, a call's id)
 *   real    a float
 *   ts      a moment: UTC text "YYYY-MM-DD HH:MM:SS.SSS" on SQLite (TypeORM's `datetime`), `timestamptz` on PostgreSQL
 *   bool    SQLite has none: 0 / 1
 *
 * A column is one of these words, `word?` when it may be NULL, or `{ type, nullable, default }`.
 */
export type Dialect = 'sqlite' | 'postgres';

export type ColumnType = 'id' | 'bigid' | 'text' | 'int' | 'bigint' | 'real' | 'ts' | 'bool';

export type Column = ColumnType | `${Exclude<ColumnType, 'id' | 'bigid'>}?` | { type: Exclude<ColumnType, 'id' | 'bigid'>; nullable?: boolean; default?: number | boolean };

/** Each word's SQL type per dialect (as TypeORM names it too). */
export const SQL_TYPES: Record<ColumnType, Record<Dialect, string>> = {
  id: { sqlite: 'integer', postgres: 'integer' },
  bigid: { sqlite: 'integer', postgres: 'bigint' },
  text: { sqlite: 'text', postgres: 'text' },
  int: { sqlite: 'integer', postgres: 'integer' },
  bigint: { sqlite: 'integer', postgres: 'bigint' },
  real: { sqlite: 'real', postgres: 'double precision' },
  ts: { sqlite: 'datetime', postgres: 'timestamp with time zone' },
  bool: { sqlite: 'integer', postgres: 'boolean' },
};

export interface ColumnSpec {
  type: ColumnType;
  nullable: boolean;
  default?: number | boolean;
  /** The row id (`id`, `bigid`): the auto-increment primary key. */
  generated: boolean;
}

/** A column's word read out. */
export function columnSpec(c: Column): ColumnSpec {
  if (typeof c === 'object') return { type: c.type, nullable: c.nullable ?? false, default: c.default, generated: false };
  const nullable = c.endsWith('?');
  const type = (nullable ? c.slice(0, -1) : c) as ColumnType;
  return { type, nullable, generated: type === 'id' || type === 'bigid' };
}

/** A value as the dialect writes it in SQL: booleans are 0 / 1 on SQLite. */
export function sqlLiteral(dialect: Dialect, v: number | boolean): string {
  return typeof v === 'boolean' && dialect === 'sqlite' ? String(Number(v)) : String(v);
}
