/** A full disk, for the tests of what labdeck does on one (SQLite: the database may not grow). */
import type { Runtime } from '../../core/runtime.js';
import { dataSourceOf } from '../../core/store/index.js';

/**
 * Make the SQLite database full, as its disk would be: it may not grow (max_page_count) and what room its
 * pages had is taken. `free()` gives the room back.
 */
export function fillDisk(runtime: Runtime) {
  type Db = { pragma(s: string, o?: object): unknown; prepare(s: string): { run(...v: unknown[]): unknown } };
  const db = (dataSourceOf(runtime.store).driver as unknown as { databaseConnection: Db }).databaseConnection;
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${pages}`);
  const filler = db.prepare('INSERT INTO "settings" ("key", "value") VALUES (?, ?)');
  for (let i = 0; ; i++) {
    try {
      filler.run(`filler-${i}`, JSON.stringify('x'.repeat(i < 1000 ? 2000 : 50)));
    } catch {
      if (i >= 1000) break; // big rows, then small ones, until not even those fit
      i = 999;
    }
  }
  return {
    free() {
      db.pragma(`max_page_count = ${pages * 100}`);
      db.prepare(`DELETE FROM "settings" WHERE "key" LIKE 'filler-%'`).run();
    },
  };
}
