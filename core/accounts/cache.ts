/**
 * A per-process copy of auth state (a token's user, an account, a session), so a request authenticates
 * without reading the database. Every copy is dropped when any process changes accounts, tokens or
 * sessions (`store.signals`: the store's own writes here, LISTEN/NOTIFY or SQLite's data_version from
 * elsewhere), and none is used while such changes could go unheard (docs/security.md, "Revocation").
 */
import type { Store } from '../store/types.js';

/** Most entries one copy keeps; past it, the oldest are dropped. */
const MAX_ENTRIES = 10_000;

export class AuthCache<V> {
  private readonly entries = new Map<string, V>();
  /** Moves on every drop: a load that began before it does not store what it read. */
  private generation = 0;
  private readonly stop: () => void;

  constructor(
    private readonly signals: Store['signals'] | undefined,
    /** Whether an entry may still be used (say, not expired); by default, always. */
    private readonly usable: (v: V) => boolean = () => true,
  ) {
    this.stop = signals?.onAuthChange(() => this.clear()) ?? (() => undefined);
  }

  /**
   * The copy of `key` when it may be used, else `load()`'s answer (kept unless a change came meanwhile).
   * `since`: the request began then, and a check for changes made after it serves it too.
   */
  async get(key: string, load: () => Promise<V>, since?: number): Promise<V> {
    if (await this.signals?.authCacheable(since)) {
      const hit = this.entries.get(key);
      if (hit !== undefined && this.usable(hit)) return hit;
    }
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) this.set(key, value);
    return value;
  }

  /** Replace the copy of `key` when there is one (this process wrote the change itself). */
  update(key: string, fn: (v: V) => V): void {
    const v = this.entries.get(key);
    if (v !== undefined) this.entries.set(key, fn(v));
  }

  private set(key: string, value: V): void {
    this.entries.delete(key); // re-inserted: the newest last
    this.entries.set(key, value);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
    this.generation++;
  }

  get size(): number {
    return this.entries.size;
  }

  close(): void {
    this.stop();
    this.clear();
  }
}
