/**
 * A store, a runner deck (test/fixtures/runner) and a Runner on it, for the unit tests of what the runner
 * writes (notifications, waiting states); each is closed after the test that opened it (`closers`, which a
 * test also uses for what it opens itself). `lab(db)` opens another runner on the same store (a restart).
 */
import { Runner } from '../../core/runner/index.js';
import type { Deck } from '../../core/deck/index.js';
import type { Store } from '../../core/store/types.js';
import { runnerDeck, type DeckState } from '../fixtures/runner/instruments.js';
import { testStore, type TestStore } from './db.js';
import { waitFor } from './wait.js';

export interface RunnerLab {
  db: TestStore;
  store: Store;
  deck: Deck;
  state: DeckState;
  runner: Runner;
}

export function runnerLabs(): { closers: (() => Promise<unknown>)[]; lab(db?: TestStore): Promise<RunnerLab> } {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });
  async function lab(db?: TestStore): Promise<RunnerLab> {
    if (!db) {
      db = await testStore();
      const d = db;
      closers.push(() => d.cleanup());
    }
    const { deck, state } = await runnerDeck(db.store.steps);
    const runner = new Runner({ store: db.store, deck });
    await runner.start();
    closers.push(async () => {
      while (state.waiting.length) state.release();
      await runner.close();
      await deck.close();
    });
    return { db, store: db.store, deck, state, runner };
  }
  return { closers, lab };
}

export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 8000): Promise<void> {
  await waitFor(cond, what, ms);
}
