/**
 * Operations on the lab's stock, consumption rules, preflight and deck versions (DESIGN.md §15; issue 32,
 * docs/resources.md): a resource added, changed, moved or deleted (audited `resources.create|change|delete`),
 * the rules, a CSV out and in, a use in doubt settled, what a task would do before it is queued (the
 * preflight, a run's uploaded config CSV read as the run reads it), and the deck's versions and their diffs.
 * core/resources does the work; a door translates shapes.
 */
import type { Workflow } from '../workflow/model.js';
import type { MoveRow, ResourceRow } from '../store/types.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

export function resourceOperations(lab: Pick<Lab, 'resources' | 'preflight' | 'store' | 'files'>) {
  const { resources, preflight, store } = lab;
  return {
    list(): Promise<ResourceRow[]> {
      return resources.list();
    },
    /** Uses of stock in doubt (a run cut off mid-step): a person says whether they happened. */
    inDoubt(): Promise<MoveRow[]> {
      return resources.inDoubt();
    },
    /** One resource, its moves, and its positions (a container's). */
    detail(name: string) {
      return resources.detail(name);
    },
    rules() {
      return resources.rules();
    },
    setRules(caller: Caller, rules: unknown) {
      return resources.setRules(rules, caller.userId);
    },
    exportCsv(): Promise<string> {
      return resources.exportCsv();
    },
    importCsv(caller: Caller, csv: string) {
      return resources.importCsv(csv, caller.userId);
    },

    async create(caller: Caller, input: Record<string, unknown>): Promise<ResourceRow> {
      const row = await resources.create(input, caller.userId);
      await audit(lab, caller, 'resources.create', { name: row.name, kind: row.kind, quantity: row.quantity });
      return row;
    },

    /** Set (`quantity`) or top up (`add`) a resource's stock. */
    async change(caller: Caller, name: string, change: { quantity?: unknown; add?: unknown; note?: unknown }): Promise<ResourceRow> {
      const row = await resources.change(name, change, caller.userId);
      await audit(lab, caller, 'resources.change', { name: row.name, quantity: change.quantity, add: change.add, now: row.quantity });
      return row;
    },

    /** Move a resource to a place (null: nowhere). */
    move(caller: Caller, name: string, to: unknown): Promise<ResourceRow> {
      return resources.move(name, to, caller.userId);
    },

    async remove(caller: Caller, name: string): Promise<void> {
      await resources.delete(name, caller.userId);
      await audit(lab, caller, 'resources.delete', { name });
    },

    /** A use in doubt settled: it happened (`used` true) or not. */
    settle(caller: Caller, moveId: number, used: unknown): Promise<MoveRow> {
      return resources.settle(moveId, used, caller.userId);
    },

    /**
     * What a run or campaign would do, before anything is queued: schemas, stock needed, duration, steps.
     * `configFile`: a run's uploaded config CSV, its rows read as queueing the run reads them.
     */
    async preflight(_caller: Caller, input: Record<string, unknown>, opts: { configFile?: string } = {}) {
      if (opts.configFile) {
        const saved = await store.workflows.get(String(input.workflow));
        if (saved) input = { ...input, config: await lab.files.configRows(opts.configFile, saved.definition as Workflow) };
      }
      return preflight.check(input);
    },

    /** The deck's versions on this labdeck (newest first), the current one, and the saved workflows they broke. */
    async deckVersions() {
      await preflight.settled();
      const [versions, broken] = await Promise.all([store.resources.deckVersions.list(100), preflight.broken()]);
      return { current: preflight.deckVersion, versions: versions.map((v) => ({ id: v.id, host: v.host, reason: v.reason, at: v.at.toISOString(), changes: v.diff })), broken };
    },

    /** One version's changes (against the one before it, or `against`). */
    deckDiff(id: number, against?: number) {
      return preflight.diff(id, against);
    },

    /** The deck version this labdeck runs now. */
    deckVersion(): number | null {
      return preflight.deckVersion;
    },
  };
}

export type ResourceOperations = ReturnType<typeof resourceOperations>;
