/**
 * The startup deck file and its own modules (an ivoryOS layout: `deck.py` importing `drivers/pump.py`), watched.
 * A saved change is not loaded into the running lab: labdeck says that a restart is needed, in the server log
 * and on the pages (the Instruments page, the home page), naming the file and when.
 *
 * Why not reload: a deck script makes its instruments as it runs (serial ports opened, a robot handed its
 * pump), and the modules it imports stay cached in the Python process; running it again beside the live
 * instances would open every port twice, and re-importing one module leaves the instances of the others on
 * the old classes. A restart disposes every instrument (close()), waits for the calls in flight, and runs
 * the deck afresh. Plugin files and imported driver modules are reloaded live (core/plugins).
 */
import { EventEmitter } from 'node:events';
import { relative, dirname } from 'node:path';
import type { FSWatcher } from 'chokidar';

/** A change to the deck on disk that the running lab has not loaded. */
export interface DeckChange {
  /** The deck file. */
  deck: string;
  /** The file that changed (the deck, or one of its modules). */
  file: string;
  at: Date;
  /** What to tell people: the file, and that labdeck must be restarted to load it. */
  message: string;
}

export interface DeckWatchOptions {
  deck: string;
  /** The deck file and its own modules (Deck.sourcesOf). */
  files: string[];
  /** Where the notice goes (the server log). */
  log: (line: string) => void;
  /** chokidar awaitWriteFinish stability threshold, ms (default 200). */
  stabilityMs?: number;
}

/** Events: 'change' (DeckChange), 'ready'. */
export class DeckWatch extends EventEmitter {
  private watcher: FSWatcher | null = null;
  /** The first change since start, until labdeck restarts (later ones are logged too). */
  changed: DeckChange | null = null;

  constructor(private readonly opts: DeckWatchOptions) {
    super();
  }

  async start(): Promise<void> {
    const { watch } = await import('chokidar');
    const stabilityMs = this.opts.stabilityMs ?? 200;
    this.watcher = watch(this.opts.files, {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: stabilityMs, pollInterval: Math.max(10, Math.min(50, stabilityMs / 4)) },
    });
    this.watcher.on('change', (f) => this.saw(f, 'changed'));
    this.watcher.on('unlink', (f) => this.saw(f, 'was deleted'));
    await new Promise<void>((r) => this.watcher!.once('ready', () => r()));
    this.emit('ready');
  }

  private saw(file: string, what: string): void {
    const name = file === this.opts.deck ? file : `${relative(dirname(this.opts.deck), file)} (of the deck ${this.opts.deck})`;
    const change: DeckChange = {
      deck: this.opts.deck,
      file,
      at: new Date(),
      message: `${name} ${what} on disk: restart labdeck to load it (a running deck is not reloaded; its instruments keep the code they started with).`,
    };
    this.changed ??= change;
    this.opts.log(`[deck] ${change.message}`);
    this.emit('change', change);
  }

  async close(): Promise<void> {
    await this.watcher?.close();
    this.watcher = null;
  }
}
