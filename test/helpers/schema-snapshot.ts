/**
 * The schema of an open store as plain text, for comparing with a committed snapshot
 * (test/fixtures/store-schema/<dialect>.txt): every table with its columns (order, type, nullability,
 * default, primary key), its indexes (name, uniqueness, columns), its constraints (name and definition) and,
 * on PostgreSQL, the sequences. What the database reports, not the SQL that made it: two sets of migrations
 * that make the same schema give the same text.
 */
import type Database from 'better-sqlite3';
import { dataSourceOf } from '../../core/store/index.js';
import type { Store } from '../../core/store/types.js';

type Row = Record<string, unknown>;

export async function schemaSnapshot(store: Store): Promise<string> {
  return store.dialect === 'postgres' ? postgresSnapshot(store) : sqliteSnapshot(store);
}

function sqliteSnapshot(store: Store): string {
  const db = (dataSourceOf(store).driver as unknown as { databaseConnection: Database.Database }).databaseConnection;
  const all = (sql: string) => db.prepare(sql).all() as Row[];
  const out: string[] = [];
  const tables = all(`SELECT "name", "sql" FROM sqlite_master WHERE "type" = 'table' AND "name" NOT LIKE 'sqlite_%' ORDER BY "name"`);
  for (const t of tables) {
    const name = String(t.name);
    out.push(`table ${name}${/AUTOINCREMENT/i.test(String(t.sql)) ? ' (autoincrement)' : ''}`);
    for (const c of all(`PRAGMA table_info("${name}")`)) {
      out.push(`  column ${String(c.name)} ${String(c.type)}${c.notnull ? ' not null' : ' null'}${c.dflt_value !== null ? ` default ${String(c.dflt_value)}` : ''}${c.pk ? ` pk${String(c.pk)}` : ''}`);
    }
    const indexes = all(`PRAGMA index_list("${name}")`).map((i) => {
      const cols = all(`PRAGMA index_info("${String(i.name)}")`)
        .map((x) => String(x.name))
        .join(', ');
      // SQLite names the indexes behind UNIQUE and PRIMARY KEY constraints itself, by their place in the text
      const label = String(i.origin) === 'c' ? String(i.name) : `(${String(i.origin) === 'pk' ? 'primary key' : 'unique constraint'})`;
      return `  index ${label}${i.unique ? ' unique' : ''} (${cols})${i.partial ? ' partial' : ''}`;
    });
    out.push(...indexes.sort());
    const fks = all(`PRAGMA foreign_key_list("${name}")`).map(
      (f) => `  foreign key (${String(f.from)}) -> ${String(f.table)}(${String(f.to)}) on delete ${String(f.on_delete)} on update ${String(f.on_update)}`,
    );
    out.push(...fks.sort());
    const named = [...String(t.sql).matchAll(/CONSTRAINT\s+"([^"]+)"/gi)].map((m) => `  constraint ${m[1]}`);
    out.push(...named.sort());
  }
  for (const i of all(`SELECT "name", "tbl_name" FROM sqlite_master WHERE "type" = 'index' AND "sql" IS NOT NULL ORDER BY "name"`)) {
    out.push(`index ${String(i.name)} on ${String(i.tbl_name)}`);
  }
  return `${out.join('\n')}\n`;
}

async function postgresSnapshot(store: Store): Promise<string> {
  const ds = dataSourceOf(store);
  const q = (sql: string) => ds.query(sql) as Promise<Row[]>;
  const out: string[] = [];
  const tables = await q(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`);
  for (const t of tables) {
    const name = String(t.table_name);
    out.push(`table ${name}`);
    const cols = await q(
      `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns ` + `WHERE table_schema = 'public' AND table_name = '${name}' ORDER BY ordinal_position`,
    );
    for (const c of cols) {
      out.push(`  column ${String(c.column_name)} ${String(c.data_type)}${c.is_nullable === 'YES' ? ' null' : ' not null'}${c.column_default !== null ? ` default ${String(c.column_default)}` : ''}`);
    }
    const idx = await q(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = '${name}' ORDER BY indexname`);
    for (const i of idx) out.push(`  index ${String(i.indexname)}: ${String(i.indexdef)}`);
    const cons = await q(
      `SELECT conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid ` +
        `JOIN pg_namespace n ON n.oid = r.relnamespace WHERE n.nspname = 'public' AND r.relname = '${name}' ORDER BY conname`,
    );
    for (const c of cons) out.push(`  constraint ${String(c.conname)}: ${String(c.def)}`);
  }
  for (const s of await q(`SELECT sequencename, data_type FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename`)) {
    out.push(`sequence ${String(s.sequencename)} ${String(s.data_type)}`);
  }
  return `${out.join('\n')}\n`;
}
