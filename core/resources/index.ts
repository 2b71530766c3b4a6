/**
 * The lab's resources (issue 32): containers with positions, consumables with a count, liquids with a
 * volume, samples with an identity that follow moves; the consumption rules every recorded call goes through
 * (core/store/resource-repos.ts counts them in the call record's transaction); the preflight of a task
 * (preflight.ts) and the deck versions (deck-versions.ts). Lab-wide: on PostgreSQL every host shares one stock.
 */
import type { Consumption } from '../contracts/index.js';
import { LabError } from '../errors.js';
import type { Deck } from '../deck/index.js';
import type { MoveRow, ResourceKind, ResourceRow, Store, UsePlanner } from '../store/types.js';
import { RESOURCE_KINDS } from '../store/resource-types.js';
import { parseRules, rulesFor, usesOf, type ConsumptionRule } from './rules.js';
import { parseCsv, toCsv } from './csv.js';

export { parseRules, rulesFor, usesOf, UNKNOWN, type ConsumptionRule } from './rules.js';

const RULES_KEY = 'resources.consumption';
/** How often a host re-reads the rules another host may have changed (ms). */
const RULES_REFRESH_MS = 2000;
const NAME = /^[A-Za-z0-9_.\-][A-Za-z0-9_.\- ]{0,119}$/;

export interface NewResource {
  name: string;
  kind: ResourceKind;
  quantity: number;
  unit: string;
  rows?: number | null;
  columns?: number | null;
  location?: string | null;
  identity?: string | null;
}

/** `A1`, `B12`: row letter(s) and column number, as racks and plates are labelled. */
export function positionName(row: number, column: number): string {
  let r = row;
  let letters = '';
  do {
    letters = String.fromCharCode(65 + (r % 26)) + letters;
    r = Math.floor(r / 26) - 1;
  } while (r >= 0);
  return `${letters}${column + 1}`;
}

export function positionsOf(rows: number, columns: number): string[] {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) for (let c = 0; c < columns; c++) out.push(positionName(r, c));
  return out;
}

function bad(field: string, message: string): LabError {
  return new LabError('invalid_input', `${field}: ${message}.`, [{ field, message }]);
}

export class Resources {
  private rulesCache: ConsumptionRule[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: { store: Store; deck: Deck }) {}

  /** Load the rules and hand the store the planner every recorded call goes through. */
  async start(): Promise<void> {
    await this.refresh();
    this.opts.store.resources.setPlanner(this.planner);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), RULES_REFRESH_MS);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.opts.store.resources.setPlanner(null);
  }

  private async refresh(): Promise<void> {
    const doc = await this.opts.store.settings.get<unknown>(RULES_KEY);
    try {
      this.rulesCache = doc === null ? [] : parseRules(doc);
    } catch {
      // stored by an older labdeck, say: kept as it was, and GET shows the document
    }
  }

  /** The driver class of an instrument of this deck (for `class:` rules), or undefined. */
  driverOf(instrument: string): string | undefined {
    return this.opts.deck.has(instrument) ? this.opts.deck.schema(instrument).driver : undefined;
  }

  /** What a method of an instrument of this deck declares it consumes (its driver's `consumes`), or undefined. */
  declaredOf(instrument: string, method: string): Consumption[] | undefined {
    if (!this.opts.deck.has(instrument)) return undefined;
    return this.opts.deck.schema(instrument).methods.find((m) => m.name === method)?.consumes;
  }

  /** Every recorded call: the lab's rules for it, or its driver's declaration (rulesFor: the lab's rule wins). */
  readonly planner: UsePlanner = (call) => {
    const declared = this.declaredOf(call.instrument, call.method);
    if (this.rulesCache.length === 0 && !declared?.length) return [];
    const args = (call.args ?? {}) as Record<string, unknown>;
    const shape = { instrument: call.instrument, driver: this.driverOf(call.instrument), method: call.method };
    return usesOf(rulesFor(this.rulesCache, shape, declared), shape, (n) => args[n]).uses;
  };

  async rules(): Promise<ConsumptionRule[]> {
    await this.refresh();
    return this.rulesCache;
  }

  async setRules(doc: unknown, userId: number | null): Promise<ConsumptionRule[]> {
    const rules = parseRules(doc);
    await this.opts.store.settings.set(RULES_KEY, rules);
    await this.opts.store.audit.add({ userId, action: 'resources.consumption', detail: { rules: rules.length } });
    this.rulesCache = rules;
    return rules;
  }

  list(): Promise<ResourceRow[]> {
    return this.opts.store.resources.list();
  }

  async get(name: string): Promise<ResourceRow> {
    const r = await this.opts.store.resources.get(name);
    if (!r) throw new LabError('not_found', `There is no resource "${name}" (GET /app/resources lists them).`, [{ field: 'name', message: 'unknown resource' }]);
    return r;
  }

  /** A resource with its ledger and, for a container, its positions and what sits in each. */
  async detail(name: string): Promise<{ resource: ResourceRow; moves: MoveRow[]; positions?: { name: string; holds: string[] }[] }> {
    const resource = await this.get(name);
    const moves = await this.opts.store.resources.moves(name, 500);
    if (resource.kind !== 'container' || !resource.rows || !resource.columns) return { resource, moves };
    const all = await this.list();
    const positions = positionsOf(resource.rows, resource.columns).map((p) => ({ name: p, holds: all.filter((r) => r.location === `${name}:${p}`).map((r) => r.name) }));
    return { resource, moves, positions };
  }

  async checkNew(r: Record<string, unknown>): Promise<NewResource> {
    const name = r.name;
    if (typeof name !== 'string' || !NAME.test(name)) throw bad('name', 'a name of letters, digits, spaces, . _ - (at most 120)');
    const kind = r.kind;
    if (typeof kind !== 'string' || !(RESOURCE_KINDS as readonly string[]).includes(kind)) throw bad('kind', `one of ${RESOURCE_KINDS.join(', ')}`);
    const quantity = r.quantity === undefined || r.quantity === null || r.quantity === '' ? (kind === 'sample' || kind === 'container' ? 1 : undefined) : Number(r.quantity);
    if (quantity === undefined || !Number.isFinite(quantity)) throw bad('quantity', 'a number (a count, a volume)');
    const unit = r.unit === undefined || r.unit === null || r.unit === '' ? (kind === 'liquid' ? 'ml' : 'each') : String(r.unit).slice(0, 40);
    const grid = (f: 'rows' | 'columns') => {
      const v = r[f];
      if (v === undefined || v === null || v === '') return null;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 702) throw bad(f, 'a whole number from 1 to 702');
      return n;
    };
    const rows = grid('rows');
    const columns = grid('columns');
    if ((rows === null) !== (columns === null)) throw bad(rows === null ? 'rows' : 'columns', 'give rows and columns together (a 8 × 12 plate: rows 8, columns 12)');
    if (rows !== null && kind !== 'container') throw bad('rows', 'only a container has positions');
    const location = r.location === undefined || r.location === null || r.location === '' ? null : await this.checkPlace(String(r.location));
    const identity = r.identity === undefined || r.identity === null || r.identity === '' ? (kind === 'sample' ? name : null) : String(r.identity).slice(0, 200);
    return { name, kind: kind as ResourceKind, quantity, unit, rows, columns, location, identity };
  }

  /** A place: `container:A1` must name a position the container has; any other text is a place of its own. */
  async checkPlace(to: string): Promise<string> {
    const m = /^(.+):([A-Z]+)(\d+)$/.exec(to);
    if (!m) return to.slice(0, 200);
    const container = await this.opts.store.resources.get(m[1]!);
    if (container && container.kind === 'container' && container.rows && container.columns && !positionsOf(container.rows, container.columns).includes(`${m[2]}${m[3]}`)) {
      throw bad('to', `${container.name} has positions A1 to ${positionName(container.rows - 1, container.columns - 1)}; there is no ${m[2]}${m[3]}`);
    }
    return to;
  }

  async create(input: Record<string, unknown>, userId: number | null): Promise<ResourceRow> {
    const r = await this.checkNew(input);
    return this.opts.store.resources.create({ ...r, rows: r.rows ?? null, columns: r.columns ?? null, location: r.location ?? null, identity: r.identity ?? null }, userId);
  }

  /** Set the stock (`quantity`) or add to it (`add`): a top-up, in the ledger with who did it. */
  async change(name: string, body: { quantity?: unknown; add?: unknown; note?: unknown }, userId: number | null): Promise<ResourceRow> {
    await this.get(name);
    const has = (v: unknown) => v !== undefined && v !== null && v !== '';
    if (has(body.quantity) === has(body.add)) throw bad(has(body.add) ? 'add' : 'quantity', 'give "quantity" (the new stock) or "add" (a top-up), one of them');
    const n = Number(has(body.quantity) ? body.quantity : body.add);
    if (!Number.isFinite(n)) throw bad(has(body.quantity) ? 'quantity' : 'add', 'a number');
    const note = typeof body.note === 'string' ? body.note.slice(0, 500) : undefined;
    const row = await this.opts.store.resources.changeQuantity(name, has(body.quantity) ? { set: n } : { add: n }, userId, note);
    if (!row) await this.get(name);
    return row!;
  }

  async move(name: string, to: unknown, userId: number | null): Promise<ResourceRow> {
    await this.get(name);
    if (to !== null && (typeof to !== 'string' || !to)) throw bad('to', 'a place: "plate1:A1", a room or shelf, or null');
    const place = to === null ? null : await this.checkPlace(to);
    return (await this.opts.store.resources.move(name, place, userId))!;
  }

  async delete(name: string, userId: number | null): Promise<void> {
    if (!(await this.opts.store.resources.delete(name, userId))) await this.get(name);
  }

  inDoubt(): Promise<MoveRow[]> {
    return this.opts.store.resources.inDoubt();
  }

  async settle(moveId: number, used: unknown, userId: number | null): Promise<MoveRow> {
    if (typeof used !== 'boolean') throw bad('used', 'true (the call used it: count it now) or false (it did not)');
    const m = await this.opts.store.resources.settle(moveId, used, userId);
    if (!m) throw new LabError('conflict', `Ledger line ${moveId} is not in doubt (settled already, or no such line).`, [{ field: 'id', message: 'not in doubt' }]);
    await this.opts.store.audit.add({ userId, action: 'resources.settle', detail: { move: moveId, resource: m.resource, used } });
    return m;
  }

  /** Every resource as CSV: name, kind, quantity, unit, rows, columns, location, identity, in_doubt. */
  async exportCsv(): Promise<string> {
    return toCsv(await this.list());
  }

  /**
   * Import a CSV of resources (the export's columns; name and kind required): new names are created, known
   * ones get the file's quantity (a stock-take). All rows are checked first; a bad one is a 400 naming its
   * line and column, and then nothing changes.
   */
  async importCsv(text: string, userId: number | null): Promise<{ created: number; updated: number }> {
    const rows = parseCsv(text);
    const checked: { line: number; r: NewResource; known: boolean }[] = [];
    for (const { line, cells } of rows) {
      try {
        const r = await this.checkNew(cells);
        checked.push({ line, r, known: (await this.opts.store.resources.get(r.name)) !== null });
      } catch (e) {
        const d = e instanceof LabError ? e.details?.[0] : undefined;
        throw new LabError('invalid_input', `Line ${line}, column ${d?.field ?? '?'}: ${d?.message ?? String(e)}.`, [{ field: `line ${line}.${d?.field ?? ''}`, message: d?.message ?? String(e) }]);
      }
    }
    let created = 0;
    let updated = 0;
    for (const { r, known } of checked) {
      if (known) {
        await this.opts.store.resources.changeQuantity(r.name, { set: r.quantity }, userId, 'CSV import');
        updated++;
      } else {
        await this.opts.store.resources.create({ ...r, rows: r.rows ?? null, columns: r.columns ?? null, location: r.location ?? null, identity: r.identity ?? null }, userId, 'import');
        created++;
      }
    }
    await this.opts.store.audit.add({ userId, action: 'resources.import', detail: { created, updated } });
    return { created, updated };
  }
}
