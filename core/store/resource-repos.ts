/**
 * The lab's stock (resource-types.ts) and the step records that change it. A call's record and what the call
 * used are written in one transaction (Sql.atomic): the stock never shows a call that has no record, nor a
 * record whose tips were not counted. Changes are relative (`quantity = quantity - ?`), so hosts sharing one
 * PostgreSQL count every call once without a lock.
 */
import { LabError } from '../errors.js';
import { setClause, stepRow, STEP_COLS } from './codec.js';
import { INSERT_STEP, STEP_FIELDS, stepParams } from './repos.js';
import type { DeckVersionRow, MoveKind, MoveRow, ResourceRow, ResourceStore, ResourceUse, UsePlanner } from './resource-types.js';
import { Sql, decodeJson, encodeJson, isUniqueViolation, toDate, toInt, toIntOrNull, type DbRow, type Stmt } from './sql.js';
import type { NewStep, Store } from './types.js';
import { deckVersions, resourceMoves, resources } from './tables.js';

const COLS = resources.cols();
const MOVE_COLS = resourceMoves.cols();
const VERSION_COLS = deckVersions.cols();
const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function resourceRow(r: DbRow): ResourceRow {
  return {
    id: toInt(r.id),
    name: String(r.name),
    kind: r.kind as ResourceRow['kind'],
    quantity: Number(r.quantity),
    unit: String(r.unit),
    rows: toIntOrNull(r.rows),
    columns: toIntOrNull(r.columns),
    location: str(r.location),
    identity: str(r.identity),
    inDoubt: toInt(r.in_doubt),
    createdAt: toDate(r.created_at),
    updatedAt: toDate(r.updated_at),
  };
}

function moveRow(r: DbRow): MoveRow {
  return {
    id: toInt(r.id),
    resource: String(r.resource),
    kind: r.kind as MoveKind,
    status: r.status as MoveRow['status'],
    delta: num(r.delta),
    fromLocation: str(r.from_location),
    toLocation: str(r.to_location),
    stepId: toIntOrNull(r.step_id),
    runId: toIntOrNull(r.run_id),
    userId: toIntOrNull(r.user_id),
    note: str(r.note),
    at: toDate(r.at),
  };
}

const INSERT_MOVE =
  `INSERT INTO "resource_moves" ("resource", "kind", "status", "delta", "from_location", "to_location", "step_id", "run_id", "user_id", "note", "at") ` +
  `VALUES (?, ?, ?, ?, (SELECT "location" FROM "resources" WHERE "name" = ?), ?, ?, ?, ?, ?, ?)`;

interface Who {
  stepId: number | null;
  runId: number | null;
  userId: number | null;
}

/** A ledger line; its from_location is where the resource is as it is written. */
function moveStmt(resource: string, kind: MoveKind, status: MoveRow['status'], delta: number | null, to: string | null, who: Who, note: string | null): Stmt {
  return { sql: INSERT_MOVE, params: [resource, kind, status, delta, resource, to, who.stepId, who.runId, who.userId, note, new Date()] };
}

/** What a use does to the stock, applied now (`done`) or put aside until a person settles it (`in-doubt`). */
function useStmts(u: ResourceUse, who: Who, inDoubt: boolean): Stmt[] {
  const at = new Date();
  const kind: MoveKind = u.to !== undefined ? 'move' : u.amount < 0 ? 'produce' : 'consume';
  const delta = u.to !== undefined ? null : -u.amount;
  const line = moveStmt(u.resource, kind, inDoubt ? 'in-doubt' : 'done', delta, u.to ?? null, who, null);
  if (inDoubt) return [line, { sql: `UPDATE "resources" SET "in_doubt" = "in_doubt" + 1, "updated_at" = ? WHERE "name" = ?`, params: [at, u.resource] }];
  return [line, ...applyStmts(u.resource, delta, u.to ?? null, at)];
}

function applyStmts(resource: string, delta: number | null, to: string | null, at: Date): Stmt[] {
  const out: Stmt[] = [];
  if (delta !== null && delta !== 0) out.push({ sql: `UPDATE "resources" SET "quantity" = "quantity" + ?, "updated_at" = ? WHERE "name" = ?`, params: [delta, at, resource] });
  if (to !== null) out.push({ sql: `UPDATE "resources" SET "location" = ?, "updated_at" = ? WHERE "name" = ?`, params: [to, at, resource] });
  return out;
}

/** Calls whose record says what they did to the stock: ok (counted) or in doubt (put aside). */
const COUNTED = new Set(['ok', 'in-doubt']);

export function createResourceRepository(sql: Sql): {
  resources: ResourceStore;
  wrapSteps(steps: Store['steps']): Store['steps'];
  within(tx: Sql): ResourceStore;
  stepsWithin(tx: Sql, steps: Store['steps']): Store['steps'];
} {
  let planner: UsePlanner | null = null;

  const plan = (call: Pick<NewStep, 'instrument' | 'method' | 'args'>): ResourceUse[] => {
    if (!planner) return [];
    try {
      return planner(call);
    } catch {
      return []; // a rule that cannot be read never fails the record of a call that happened
    }
  };

  const resources: ResourceStore = {
    async list() {
      return (await sql.rows(`SELECT ${COLS} FROM "resources" ORDER BY "name"`)).map(resourceRow);
    },
    async get(name) {
      const r = await sql.one(`SELECT ${COLS} FROM "resources" WHERE "name" = ?`, [name]);
      return r ? resourceRow(r) : null;
    },
    async create(r, userId, kind = 'create') {
      const at = new Date();
      try {
        const row = await sql.atomic(
          {
            sql: `INSERT INTO "resources" ("name", "kind", "quantity", "unit", "rows", "columns", "location", "identity", "in_doubt", "created_at", "updated_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING ${COLS}`,
            params: [r.name, r.kind, r.quantity, r.unit, r.rows, r.columns, r.location, r.identity, at, at],
          },
          () => [moveStmt(r.name, kind, 'done', r.quantity, r.location, { stepId: null, runId: null, userId }, null)],
        );
        return resourceRow(row!);
      } catch (e) {
        if (isUniqueViolation(e) || isUniqueViolation((e as { cause?: unknown }).cause)) {
          throw new LabError('conflict', `There is a resource "${r.name}" already: top it up (PATCH /app/resources/${r.name}) or pick another name.`, [{ field: 'name', message: 'taken' }]);
        }
        throw e;
      }
    },
    async changeQuantity(name, change, userId, note) {
      const at = new Date();
      const before = await resources.get(name);
      if (!before) return null;
      const delta = change.add ?? change.set! - before.quantity;
      const row = await sql.atomic(
        change.add !== undefined
          ? { sql: `UPDATE "resources" SET "quantity" = "quantity" + ?, "updated_at" = ? WHERE "name" = ? RETURNING ${COLS}`, params: [change.add, at, name] }
          : { sql: `UPDATE "resources" SET "quantity" = ?, "updated_at" = ? WHERE "name" = ? RETURNING ${COLS}`, params: [change.set!, at, name] },
        (r) => (r ? [moveStmt(name, change.add !== undefined ? 'topup' : 'set', 'done', delta, null, { stepId: null, runId: null, userId }, note ?? null)] : []),
      );
      return row ? resourceRow(row) : null;
    },
    async move(name, to, userId, note) {
      const at = new Date();
      const row = await sql.atomic({ sql: `SELECT ${COLS} FROM "resources" WHERE "name" = ?`, params: [name] }, (r) =>
        r
          ? [
              moveStmt(name, 'move', 'done', null, to, { stepId: null, runId: null, userId }, note ?? null),
              { sql: `UPDATE "resources" SET "location" = ?, "updated_at" = ? WHERE "name" = ?`, params: [to, at, name] },
            ]
          : [],
      );
      return row ? resources.get(name) : null;
    },
    async delete(name, userId) {
      const row = await sql.atomic({ sql: `SELECT ${COLS} FROM "resources" WHERE "name" = ?`, params: [name] }, (r) =>
        r ? [moveStmt(name, 'delete', 'done', null, null, { stepId: null, runId: null, userId }, null), { sql: `DELETE FROM "resources" WHERE "name" = ?`, params: [name] }] : [],
      );
      return row !== null;
    },
    async moves(name, limit) {
      const n = Math.max(1, Math.min(10_000, Math.floor(limit) || 100));
      const rows =
        name === null
          ? await sql.rows(`SELECT ${MOVE_COLS} FROM "resource_moves" ORDER BY "id" DESC LIMIT ?`, [n])
          : await sql.rows(`SELECT ${MOVE_COLS} FROM "resource_moves" WHERE "resource" = ? ORDER BY "id" DESC LIMIT ?`, [name, n]);
      return rows.map(moveRow);
    },
    async inDoubt() {
      return (await sql.rows(`SELECT ${MOVE_COLS} FROM "resource_moves" WHERE "status" = 'in-doubt' ORDER BY "id"`)).map(moveRow);
    },
    async settle(moveId, used, userId) {
      const at = new Date();
      const row = await sql.atomic(
        {
          sql: `UPDATE "resource_moves" SET "status" = ?, "note" = ? WHERE "id" = ? AND "status" = 'in-doubt' RETURNING ${MOVE_COLS}`,
          params: [used ? 'settled-used' : 'settled-unused', `settled by user ${userId ?? '?'} at ${at.toISOString()}: ${used ? 'the call used it' : 'the call did not use it'}`, moveId],
        },
        (r) => {
          if (!r) return [];
          const m = moveRow(r);
          const undoubt: Stmt = { sql: `UPDATE "resources" SET "in_doubt" = "in_doubt" - 1, "updated_at" = ? WHERE "name" = ? AND "in_doubt" > 0`, params: [at, m.resource] };
          return [undoubt, ...(used ? applyStmts(m.resource, m.delta, m.toLocation, at) : [])];
        },
      );
      return row ? moveRow(row) : null;
    },
    async durations(instrument, method, limit) {
      const rows = await sql.rows(`SELECT "started_at", "ended_at" FROM "steps" WHERE "instrument" = ? AND "method" = ? AND "status" = 'ok' AND "ended_at" IS NOT NULL ORDER BY "id" DESC LIMIT ?`, [
        instrument,
        method,
        limit,
      ]);
      return rows.map((r) => toDate(r.ended_at).getTime() - toDate(r.started_at).getTime()).filter((d) => Number.isFinite(d) && d >= 0);
    },
    async markRunInDoubt(runId) {
      if (!planner) return;
      const running = (await sql.rows(`SELECT ${STEP_COLS} FROM "steps" WHERE "run_id" = ? AND "status" = 'running'`, [runId])).map(stepRow);
      for (const s of running) {
        const uses = plan(s);
        if (uses.length === 0) continue;
        const who = { stepId: s.id, runId: s.runId, userId: s.userId };
        await sql.atomic({ sql: `SELECT "id" FROM "steps" WHERE "id" = ?`, params: [s.id] }, () => uses.flatMap((u) => useStmts(u, who, true)));
      }
    },
    setPlanner(p) {
      planner = p;
    },
    deckVersions: {
      async add(v) {
        const r = await sql.one(`INSERT INTO "deck_versions" ("host", "reason", "schemas", "diff", "at") VALUES (?, ?, ?, ?, ?) RETURNING ${VERSION_COLS}`, [
          v.host,
          v.reason,
          encodeJson(v.schemas, 'schemas') ?? 'null',
          encodeJson(v.diff, 'diff') ?? 'null',
          new Date(),
        ]);
        return versionRow(r!);
      },
      async latest(host) {
        const r =
          host === undefined
            ? await sql.one(`SELECT ${VERSION_COLS} FROM "deck_versions" ORDER BY "id" DESC LIMIT 1`)
            : await sql.one(`SELECT ${VERSION_COLS} FROM "deck_versions" WHERE "host" = ? ORDER BY "id" DESC LIMIT 1`, [host]);
        return r ? versionRow(r) : null;
      },
      async get(id) {
        const r = await sql.one(`SELECT ${VERSION_COLS} FROM "deck_versions" WHERE "id" = ?`, [id]);
        return r ? versionRow(r) : null;
      },
      async list(limit) {
        const rows = await sql.rows(`SELECT ${deckVersions.cols({ except: ['schemas'] })} FROM "deck_versions" ORDER BY "id" DESC LIMIT ?`, [Math.max(1, Math.min(1000, limit))]);
        return rows.map((r) => ({ id: toInt(r.id), host: String(r.host), reason: String(r.reason), diff: decodeJson(r.diff), at: toDate(r.at) }));
      },
      async stampRun(runId, version) {
        await sql.run(`INSERT INTO "run_deck_versions" ("run_id", "version") VALUES (?, ?) ON CONFLICT ("run_id") DO UPDATE SET "version" = excluded."version"`, [runId, version]);
      },
      async ofRun(runId) {
        const r = await sql.one(`SELECT "version" FROM "run_deck_versions" WHERE "run_id" = ?`, [runId]);
        return r ? toInt(r.version) : null;
      },
    },
  };

  /** The steps repository, with each counted call's uses written in its record's transaction. */
  function wrapSteps(steps: Store['steps']): Store['steps'] {
    return {
      ...steps,
      async insert(s) {
        const uses = COUNTED.has(s.status) ? plan(s) : [];
        if (uses.length === 0) return steps.insert(s);
        const row = await sql.atomic({ sql: INSERT_STEP, params: stepParams(s) }, (r) =>
          uses.flatMap((u) => useStmts(u, { stepId: toInt(r!.id), runId: s.runId, userId: s.userId }, s.status === 'in-doubt')),
        );
        return toInt(row!.id);
      },
      async update(id, patch) {
        if (!planner || patch.status === undefined || !COUNTED.has(patch.status)) return steps.update(id, patch);
        // a call's record completed names its call: one that uses nothing needs no read of the record first
        if (patch.instrument !== undefined && patch.method !== undefined && patch.args !== undefined && plan({ instrument: patch.instrument, method: patch.method, args: patch.args }).length === 0) {
          return steps.update(id, patch);
        }
        const before = await steps.get(id);
        if (!before || before.status === patch.status || COUNTED.has(before.status)) return steps.update(id, patch);
        const uses = plan({ instrument: patch.instrument ?? before.instrument, method: patch.method ?? before.method, args: patch.args ?? before.args });
        if (uses.length === 0) return steps.update(id, patch);
        const { sets, params } = setClause(patch, STEP_FIELDS);
        const who = { stepId: id, runId: patch.runId ?? before.runId, userId: patch.userId ?? before.userId };
        await sql.atomic({ sql: `UPDATE "steps" SET ${sets.join(', ')} WHERE "id" = ? RETURNING "id"`, params: [...params, id] }, (r) =>
          r ? uses.flatMap((u) => useStmts(u, who, patch.status === 'in-doubt')) : [],
        );
      },
    };
  }

  /** The same repository on a transaction's Sql (core/notify's store.transaction), with the same rules. */
  const within = (tx: Sql): ResourceStore => {
    const r = createResourceRepository(tx).resources;
    r.setPlanner(planner);
    return r;
  };

  /** The steps repository on a transaction's Sql (`steps` of store.transaction), its uses counted as outside it. */
  const stepsWithin = (tx: Sql, steps: Store['steps']): Store['steps'] => {
    const r = createResourceRepository(tx);
    r.resources.setPlanner(planner);
    return r.wrapSteps(steps);
  };

  return { resources, wrapSteps, within, stepsWithin };
}

function versionRow(r: DbRow): DeckVersionRow {
  return { id: toInt(r.id), host: String(r.host), reason: String(r.reason), schemas: decodeJson(r.schemas), diff: decodeJson(r.diff), at: toDate(r.at) };
}
