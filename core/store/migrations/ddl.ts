/**
 * What a migration writes, once for both dialects: tables, columns, indexes and foreign keys in the column
 * words of ../columns.ts, rendered as SQLite's or PostgreSQL's SQL here. A migration is
 *
 *   async up(q: QueryRunner) {
 *     await ddl(q, async (t) => {
 *       await t.createTable('notes', { id: 'id', body: 'text', user_id: 'int?', created_at: 'ts' }, {
 *         unique: { uq_notes_body: ['body'] },
 *         foreignKeys: { fk_notes_user: ['user_id', 'users', 'SET NULL'] },
 *       });
 *       await t.createIndex('ix_notes_user', 'notes', ['user_id']);
 *     });
 *   }
 *
 * The differences this file hides: the row id (`integer PRIMARY KEY AUTOINCREMENT` on SQLite; `serial` and a
 * `pk_<table>` constraint on PostgreSQL), the types (columns.ts) and booleans (`t.bool(true)`), and foreign
 * keys (inside CREATE TABLE on SQLite, which cannot add one later; on PostgreSQL added when the migration's
 * tables all exist, so two tables may point at each other). What is left differs in one line of the migration
 * itself (`if (t.dialect === 'postgres') …`).
 */
import type { QueryRunner } from 'typeorm';
import { columnSpec, sqlLiteral, SQL_TYPES, type Column, type Dialect } from '../columns.js';

/** A foreign key: [column, the table whose "id" it holds, what happens to the row when that one goes]. */
export type ForeignKey = [column: string, references: string, onDelete: 'CASCADE' | 'SET NULL'];

export interface TableOptions {
  /** The primary key when it is not an `id` column (a text key, say). */
  primary?: string;
  /**
   * SQLite: the primary key written on its column (`"sid" text PRIMARY KEY`), without the name `pk_<table>`:
   * how the first tables (sessions, settings, run_deck_versions) were made. The same key either way.
   */
  sqliteUnnamedKey?: boolean;
  unique?: Record<string, string[]>;
  foreignKeys?: Record<string, ForeignKey>;
}

export interface Ddl {
  readonly dialect: Dialect;
  createTable(table: string, columns: Record<string, Column>, opts?: TableOptions): Promise<void>;
  dropTable(table: string): Promise<void>;
  addColumn(table: string, column: string, type: Column): Promise<void>;
  dropColumn(table: string, column: string): Promise<void>;
  createIndex(name: string, table: string, columns: string[]): Promise<void>;
  dropIndex(name: string): Promise<void>;
  /** A boolean as the dialect writes it (SQLite: 1 / 0). */
  bool(v: boolean): string;
  /** Any other statement (data changes), written once for both. */
  query(sql: string): Promise<void>;
}

/** The dialect a migration runs on: TypeORM's PostgreSQL runner, else SQLite (TypeORM's, or sqlite.ts's). */
export function dialectOf(q: QueryRunner): Dialect {
  const type = (q as { connection?: { options?: { type?: string } } }).connection?.options?.type;
  return type === 'postgres' ? 'postgres' : 'sqlite';
}

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(', ');

/** Runs a migration's steps on `q`; on PostgreSQL the foreign keys they declared are added at the end. */
export async function ddl(q: QueryRunner, steps: (t: Ddl) => Promise<void>): Promise<void> {
  const dialect = dialectOf(q);
  const later: string[] = [];
  const run = async (sql: string) => void (await q.query(sql));
  const columnSql = (name: string, c: Column, inlineKey = false) => {
    const s = columnSpec(c);
    if (s.generated) {
      if (dialect === 'sqlite') return `"${name}" integer PRIMARY KEY AUTOINCREMENT NOT NULL`;
      return `"${name}" ${s.type === 'bigid' ? 'BIGSERIAL' : 'SERIAL'} NOT NULL`;
    }
    const dflt = s.default === undefined ? '' : ` DEFAULT ${sqlLiteral(dialect, s.default)}`;
    return `"${name}" ${SQL_TYPES[s.type][dialect]}${inlineKey ? ' PRIMARY KEY' : ''}${s.nullable ? '' : ' NOT NULL'}${dflt}`;
  };
  const t: Ddl = {
    dialect,
    async createTable(table, columns, opts = {}) {
      const idColumn = Object.keys(columns).find((c) => columnSpec(columns[c]!).generated);
      const key = opts.primary ?? idColumn;
      const inlineKey = dialect === 'sqlite' && !!opts.sqliteUnnamedKey;
      const parts = Object.entries(columns).map(([name, c]) => columnSql(name, c, inlineKey && name === key));
      for (const [name, cols] of Object.entries(opts.unique ?? {})) parts.push(`CONSTRAINT "${name}" UNIQUE (${quoted(cols)})`);
      // SQLite's row id carries its key on its column (AUTOINCREMENT needs it there)
      if (key && !inlineKey && (dialect === 'postgres' || key !== idColumn)) parts.push(`CONSTRAINT "pk_${table}" PRIMARY KEY ("${key}")`);
      for (const [name, [column, target, onDelete]] of Object.entries(opts.foreignKeys ?? {})) {
        const fk = `CONSTRAINT "${name}" FOREIGN KEY ("${column}") REFERENCES "${target}" ("id") ON DELETE ${onDelete} ON UPDATE NO ACTION`;
        if (dialect === 'sqlite') parts.push(fk);
        else later.push(`ALTER TABLE "${table}" ADD ${fk}`);
      }
      await run(`CREATE TABLE "${table}" (${parts.join(', ')})`);
    },
    dropTable: (table) => run(`DROP TABLE "${table}"`),
    addColumn: (table, column, type) => run(`ALTER TABLE "${table}" ADD COLUMN ${columnSql(column, type)}`),
    dropColumn: (table, column) => run(`ALTER TABLE "${table}" DROP COLUMN "${column}"`),
    createIndex: (name, table, columns) => run(`CREATE INDEX "${name}" ON "${table}" (${quoted(columns)})`),
    dropIndex: (name) => run(`DROP INDEX "${name}"`),
    bool: (v) => sqlLiteral(dialect, v),
    query: run,
  };
  await steps(t);
  for (const sql of later) await run(sql);
}
