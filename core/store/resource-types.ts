/**
 * The shapes of the resources store (issue 32): the lab's stock, its ledger, and deck versions. Lab-wide: on
 * PostgreSQL every host reads and changes one stock.
 */
import type { NewStep } from './types.js';

export type ResourceKind = 'consumable' | 'liquid' | 'container' | 'sample';
export const RESOURCE_KINDS: readonly ResourceKind[] = ['consumable', 'liquid', 'container', 'sample'];

export interface ResourceRow {
  id: number;
  name: string;
  kind: ResourceKind;
  /** Count (consumables, a container's free places), volume (liquids), 1 for a sample. */
  quantity: number;
  unit: string;
  /** A container's grid (positions A1 … named by row letter and column number); null otherwise. */
  rows: number | null;
  columns: number | null;
  /** Where it is: a container and position (`plate1:A1`), a place, or null. */
  location: string | null;
  /** A sample's identity (barcode, name); null otherwise. */
  identity: string | null;
  /** How many in-doubt calls may or may not have used it (a person settles them). */
  inDoubt: number;
  createdAt: Date;
  updatedAt: Date;
}

export type MoveKind = 'create' | 'set' | 'topup' | 'consume' | 'produce' | 'move' | 'import' | 'delete';
export type MoveStatus = 'done' | 'in-doubt' | 'settled-used' | 'settled-unused';

export interface MoveRow {
  id: number;
  resource: string;
  kind: MoveKind;
  status: MoveStatus;
  /** Change of quantity (negative: used up). */
  delta: number | null;
  fromLocation: string | null;
  toLocation: string | null;
  stepId: number | null;
  runId: number | null;
  userId: number | null;
  note: string | null;
  at: Date;
}

/** What one call does to one resource: uses `amount` of it (negative: makes it), or moves it `to` a place. */
export interface ResourceUse {
  resource: string;
  amount: number;
  to?: string;
}

/** The consumption rules applied to a call being recorded (core/resources sets it). */
export type UsePlanner = (call: Pick<NewStep, 'instrument' | 'method' | 'args'>) => ResourceUse[];

export interface DeckVersionRow {
  id: number;
  host: string;
  reason: string;
  schemas: unknown;
  diff: unknown;
  at: Date;
}

export interface ResourceStore {
  list(): Promise<ResourceRow[]>;
  get(name: string): Promise<ResourceRow | null>;
  /** A new resource; 409 when the name is taken. */
  create(r: Pick<ResourceRow, 'name' | 'kind' | 'quantity' | 'unit' | 'rows' | 'columns' | 'location' | 'identity'>, userId: number | null, kind?: MoveKind): Promise<ResourceRow>;
  /** Set the stock (`set`) or add to it (`add`), with the ledger line, in one transaction. */
  changeQuantity(name: string, change: { set?: number; add?: number }, userId: number | null, note?: string): Promise<ResourceRow | null>;
  /** Move it to a place (a container's position), with the ledger line. */
  move(name: string, to: string | null, userId: number | null, note?: string): Promise<ResourceRow | null>;
  delete(name: string, userId: number | null): Promise<boolean>;
  /** The ledger of one resource (newest first), or of every one. */
  moves(name: string | null, limit: number): Promise<MoveRow[]>;
  /** The lines of in-doubt calls waiting for a person. */
  inDoubt(): Promise<MoveRow[]>;
  /** Settle an in-doubt line: the call used it (the change applies now) or it did not; null when it is not in doubt. */
  settle(moveId: number, used: boolean, userId: number | null): Promise<MoveRow | null>;
  /** Durations (ms) of the last `limit` calls of one method that ended ok, newest first. */
  durations(instrument: string, method: string, limit: number): Promise<number[]>;
  /** Mark the resources of a run's `running` steps in doubt (a crash left them; before runSteps.markInDoubt). */
  markRunInDoubt(runId: number): Promise<void>;
  /** The rules every recorded call goes through; null: none. */
  setPlanner(p: UsePlanner | null): void;
  deckVersions: {
    add(v: Pick<DeckVersionRow, 'host' | 'reason' | 'schemas' | 'diff'>): Promise<DeckVersionRow>;
    /** The newest version (of one host's deck, when named). */
    latest(host?: string): Promise<DeckVersionRow | null>;
    get(id: number): Promise<DeckVersionRow | null>;
    /** Newest first, without their schemas. */
    list(limit: number): Promise<Omit<DeckVersionRow, 'schemas'>[]>;
    stampRun(runId: number, version: number): Promise<void>;
    ofRun(runId: number): Promise<number | null>;
  };
}
