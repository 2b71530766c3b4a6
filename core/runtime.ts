/**
 * createRuntime: the one object the web app and the CLI share. It opens the database, loads the plugins and
 * the deck, and wires accounts, branding and the audit log together. Nothing here knows about HTTP or
 * terminals.
 */
import { join, resolve } from 'node:path';
import { Accounts, type AccountsOptions } from './accounts/index.js';
import { Approvals } from './approvals/index.js';
import { Attention } from './attention/index.js';
import { BrandingService } from './branding.js';
import { Deck } from './deck/index.js';
import { DeckWatch } from './deck/watch.js';
import { FileStore } from './files/store.js';
import { PluginHost } from './plugins/index.js';
import { Agents } from './hosts/agent.js';
import type { HostOptions } from './runner/hosts.js';
import { Runner, type RunnerOptions } from './runner/index.js';
import { Campaigns } from './campaign/index.js';
import { PythonModules } from './hosts/index.js';
import { demoDeckPath, firstPartyPluginsDir, privateDir } from './paths.js';
import { openStore } from './store/index.js';
import type { Store } from './store/types.js';

export interface RuntimeOptions {
  /** Deck module to load; default: the demo deck. `false`: start with an empty deck. */
  deck?: string | false;
  /** The user's plugin folder(s); default `./lab-plugins`. First-party plugins are always loaded. */
  pluginDirs?: string[];
  /** Where the database, the session secret and uploads live; default `./lab-data`. */
  dataDir?: string;
  /** Database URL: `sqlite:PATH` or `postgres://…`; default SQLite in the data directory. */
  db?: string;
  /** Watch plugin folders and reload on change (default true; tests turn it off). */
  watch?: boolean;
  /** Python interpreter for Python decks and drivers (default: LABDECK_PYTHON, then `python3`). */
  python?: string;
  /** Time limit of one console run, ms (default 10 s). */
  consoleTimeoutMs?: number;
  /** Where the Python host's own output (prints outside calls, tracebacks, restarts) goes; default stderr. */
  log?: (line: string) => void;
  /** Largest workflow file upload, in bytes (default 10 MB); bigger ones are refused (413). */
  uploadLimitBytes?: number;
  accounts?: AccountsOptions;
  /** This process as one of the lab's hosts (kind, name, lease; DESIGN.md §12). Default: a `serve` host. */
  labHost?: HostOptions;
  /** Which queued tasks the runner takes: the queue's (default), or only its own (`lab run`). */
  takes?: RunnerOptions['takes'];
  /** How many tasks on disjoint instruments run at once (`lab serve --parallel N`; default 1). */
  parallel?: number;
  /** How long an agent's request waits in the approval inbox before it expires (default an hour). */
  approvalTtlMs?: number;
  /** How long a call relayed to a `lab agent` may go unanswered before it fails in doubt (default 10 minutes). */
  agentCallTimeoutMs?: number;
}

export interface Runtime {
  readonly dataDir: string;
  readonly deckFile: string | null;
  /** The console's time limit per run, ms. */
  readonly consoleTimeoutMs: number;
  readonly store: Store;
  readonly deck: Deck;
  /** Instruments on other PCs: the `lab agent`s connected to this labdeck. */
  readonly agents: Agents;
  readonly plugins: PluginHost;
  /** Python decks and drivers: the Python host process (started when first needed). */
  readonly python: PythonModules;
  readonly runner: Runner;
  readonly campaigns: Campaigns;
  /** What AI agents may do at once and what waits for a person (the approval inbox). */
  readonly approvals: Approvals;
  /** Everything that waits for a person across the lab (core/attention). */
  readonly attention: Attention;
  readonly accounts: Accounts;
  readonly branding: BrandingService;
  /** Uploaded workflow config and history files (core/files). */
  readonly files: FileStore;
  /** The startup deck and its own modules on disk, watched (null without `watch` or a deck): a change needs a restart. */
  readonly deckWatch: DeckWatch | null;
  audit(userId: number | null, action: string, detail: unknown): Promise<void>;
  close(): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const dataDir = resolve(options.dataDir ?? 'lab-data');
  await privateDir(dataDir); // a new data folder is its owner's only
  const store = await openStore({ url: options.db, dataDir });
  const python = new PythonModules({ python: options.python, log: options.log });
  const deck = new Deck({ recordStep: (step) => store.steps.insert(step), foreign: python });
  python.attach(deck);
  const pluginDirs = [firstPartyPluginsDir(), ...(options.pluginDirs ?? [resolve('lab-plugins')]).map((d) => resolve(d))];
  const plugins = new PluginHost({ deck, dirs: pluginDirs, watch: options.watch ?? true, foreign: python });
  let deckWatch: DeckWatch | null = null;
  try {
    await plugins.start();
    const deckFile = options.deck === false ? null : resolve(options.deck ?? demoDeckPath());
    if (deckFile) await deck.loadDeck(deckFile);
    if (deckFile && (options.watch ?? true)) {
      deckWatch = new DeckWatch({ deck: deckFile, files: deck.sourcesOf(deckFile), log: options.log ?? ((line) => process.stderr.write(`${line}\n`)) });
      await deckWatch.start();
    }
    const files = new FileStore(store, dataDir, { limitBytes: options.uploadLimitBytes });
    // campaigns and the runner need each other: the runner runs campaign iterations, campaigns queue tasks
    let runnerRef: Runner | null = null;
    const campaigns = new Campaigns({ store, deck, files, runner: () => runnerRef!, optimizers: () => plugins.registry('optimizer') });
    const runner = (runnerRef = new Runner({ store, deck, sources: { campaign: campaigns.source }, host: options.labHost, takes: options.takes, parallel: options.parallel }));
    await runner.start();
    const audit: Runtime['audit'] = (userId, action, detail) => store.audit.add({ userId, action, detail });
    const runtime: Runtime = {
      dataDir,
      deckFile,
      consoleTimeoutMs: options.consoleTimeoutMs ?? 10_000,
      store,
      deck,
      agents: new Agents({ deck, store, audit, callTimeoutMs: options.agentCallTimeoutMs }),
      plugins,
      python,
      runner,
      campaigns,
      approvals: new Approvals({ store, deck, runner, campaigns, ttlMs: options.approvalTtlMs }),
      attention: new Attention({ store, runner }),
      accounts: new Accounts(store, options.accounts),
      branding: new BrandingService(store, join(dataDir, 'uploads')),
      files,
      deckWatch,
      audit,
      async close() {
        await deckWatch?.close();
        await runner.close();
        await plugins.close();
        await deck.close();
        await python.close();
        await store.close();
      },
    };
    return runtime;
  } catch (e) {
    await deckWatch?.close().catch(() => undefined);
    await plugins.close().catch(() => undefined);
    await deck.close().catch(() => undefined);
    await python.close().catch(() => undefined);
    await store.close();
    throw e;
  }
}
