/**
 * How a table is described (tables.ts): its columns by field name (the row type's, camelCase; the column is
 * its snake_case), in the column words of columns.ts, with its keys, indexes and foreign keys. From that one
 * description come the column lists the repositories select (`users.cols()`), TypeORM's entity of the table
 * for both dialects (entities.ts, which the drift test compares with what the migrations made), and a
 * compile-time check that the row type of types.ts has exactly these fields (tables.ts, at its end).
 * No TypeORM here: the repositories load this on SQLite too.
 */
import type { Column } from './columns.js';

/** A foreign key: [field, the table whose "id" it holds, what happens to the row when that one goes]. */
export type TableForeignKey<K> = [field: K, references: string, onDelete: 'CASCADE' | 'SET NULL'];

export interface TableOptions<K extends string> {
  /** The primary key when it is not an `id` / `bigid` column. */
  primary?: K;
  unique?: Record<string, K[]>;
  indexes?: Record<string, K[]>;
  foreignKeys?: Record<string, TableForeignKey<K>>;
}

/** What every table has, whatever its columns (entities.ts reads tables through this). */
export interface TableShape {
  readonly name: string;
  readonly columns: Record<string, Column>;
  readonly options: TableOptions<string>;
}

export interface Table<C extends Record<string, Column> = Record<string, Column>> extends TableShape {
  readonly columns: C;
  readonly options: TableOptions<keyof C & string>;
  /** A field's column name. */
  column(field: keyof C & string): string;
  /** The quoted column list, `"id", "name", …` (`as`: each prefixed with that table alias). */
  cols(opts?: { except?: (keyof C & string)[]; as?: string }): string;
}

/** The fields of a table: what its row type must have. */
export type FieldsOf<T> = T extends Table<infer C> ? keyof C : never;

/** `passwordHash` → `password_hash`. */
export const snake = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function table<C extends Record<string, Column>>(name: string, columns: C, options: TableOptions<keyof C & string> = {}): Table<C> {
  const fields = Object.keys(columns) as (keyof C & string)[];
  const all = fields.map((f) => `"${snake(f)}"`).join(', ');
  return {
    name,
    columns,
    options,
    column: snake,
    cols(opts = {}) {
      if (!opts.except?.length && !opts.as) return all;
      const prefix = opts.as ? `${opts.as}.` : '';
      return fields
        .filter((f) => !opts.except?.includes(f))
        .map((f) => `${prefix}"${snake(f)}"`)
        .join(', ');
    },
  };
}
