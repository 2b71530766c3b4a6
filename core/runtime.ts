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
import { CampaignPoints } from './campaign/manual.js';
import { PythonModules } from './hosts/index.js';
import { demoDeckPath, firstPartyPluginsDir, privateDir } from './paths.js';
import { createOperations, type Operations } from './operations/index.js';
import { SafetyGuard } from './safety/index.js';
import { checkRun, checkSpace, preflightVerdict } from './safety/upfront.js';
import { openStore } from './store/index.js';
import { startNotifications } from './notify/wiring.js';
import type { Notifications } from './notify/index.js';
import { Resources } from './resources/index.js';
import { Preflight } from './resources/preflight.js';
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
  /** Deliver notifications from this process (default true; core/notify). */
  notify?: boolean;
  /** The safety file (`lab serve --safety FILE`); default `<data-dir>/safety.json` when present (core/safety). */
  safety?: string;
  /** Bound on a safety rule's reading, ms (default 10 s). */
  safetyReadTimeoutMs?: number;
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
  /** The lab's stock and the consumption rules (core/resources). */
  readonly resources: Resources;
  /** What a task will do before it moves: schemas, stock, duration, deck versions (core/resources/preflight.ts). */
  readonly preflight: Preflight;
  /** The lab's safety guard: limits, trays, rules and states, enforced on every call (core/safety). */
  readonly safety: SafetyGuard;
  /** The startup deck and its own modules on disk, watched (null without `watch` or a deck): a change needs a restart. */
  readonly deckWatch: DeckWatch | null;
  /** Every operation once, for every door (core/operations): doors call these, not the parts above. */
  readonly ops: Operations;
  /** Channels, the outbox's deliverer and the watchdog (core/notify, docs/notifications.md). */
  readonly notifications: Notifications;
  audit(userId: number | null, action: string, detail: unknown): Promise<void>;
  close(): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const dataDir = resolve(options.dataDir ?? 'lab-data');
  await privateDir(dataDir); // a new data folder is its owner's only
  const store = await openStore({ url: options.db, dataDir });
  const python = new PythonModules({ python: options.python, log: options.log });
  const deck = new Deck({ records: store.steps, foreign: python });
  python.attach(deck);
  const audit: Runtime['audit'] = (userId, action, detail) => store.audit.add({ userId, action, detail });
  const safety = new SafetyGuard({ store, dataDir, file: options.safety, audit, readTimeoutMs: options.safetyReadTimeoutMs });
  deck.guard = safety;
  deck.levelOf = (instrument, classes, method) => safety.levelOf(instrument, classes, method);
  const pluginDirs = [firstPartyPluginsDir(), ...(options.pluginDirs ?? [resolve('lab-plugins')]).map((d) => resolve(d))];
  const plugins = new PluginHost({ deck, dirs: pluginDirs, watch: options.watch ?? true, foreign: python });
  let deckWatch: DeckWatch | null = null;
  try {
    await safety.start();
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
    campaigns.points = new CampaignPoints({ store, campaigns });
    const runner = (runnerRef = new Runner({ store, deck, sources: { campaign: campaigns.source }, host: options.labHost, takes: options.takes, parallel: options.parallel }));
    const resources = new Resources({ store, deck });
    await resources.start();
    const preflight = new Preflight({ store, deck, runner, campaigns, resources });
    await preflight.start();
    const schemaOf = (name: string) => runner.catalogue.list!().find((i) => i.name === name);
    runner.preflight = (p) => checkRun(safety, schemaOf, p.definition, p.rows ?? (p.repeat ? [p.repeat.row] : []), !p.rows);
    campaigns.preflight = (p) => checkSpace(safety, schemaOf, p.definition, p.space, p.fixed, p.constraints);
    preflight.safety = (kind, p) => preflightVerdict(safety, schemaOf, kind, p as Parameters<typeof preflightVerdict>[3]);
    await runner.start();
    const notifications = startNotifications({ store, runner, deck, deliver: options.notify });
    const audit: Runtime['audit'] = (userId, action, detail) => store.audit.add({ userId, action, detail });
    const approvals = new Approvals({ store, deck, runner, campaigns, ttlMs: options.approvalTtlMs });
    const consoleTimeoutMs = options.consoleTimeoutMs ?? 10_000;
    const branding = new BrandingService(store, join(dataDir, 'uploads'));
    const accounts = new Accounts(store, options.accounts);
    const attention = new Attention({ store, runner });
    const agents = new Agents({ deck, store, audit, callTimeoutMs: options.agentCallTimeoutMs, safety });
    const runtime: Runtime = {
      dataDir,
      deckFile,
      consoleTimeoutMs,
      store,
      deck,
      agents,
      plugins,
      python,
      runner,
      campaigns,
      approvals,
      accounts,
      branding,
      attention,
      files,
      resources,
      preflight,
      safety,
      deckWatch,
      ops: createOperations({
        store,
        deck,
        runner,
        campaigns,
        approvals,
        files,
        python,
        consoleTimeoutMs,
        branding,
        accounts,
        safety,
        notifications,
        resources,
        preflight,
        attention,
        agents,
        plugins,
        deckFile,
        deckWatch,
        dataDir,
      }),
      notifications,
      audit,
      async close() {
        await deckWatch?.close();
        await runner.close();
        await notifications.close();
        preflight.close();
        resources.close();
        safety.close();
        await plugins.close();
        await deck.close();
        await python.close();
        await store.close();
      },
    };
    return runtime;
  } catch (e) {
    safety.close();
    await deckWatch?.close().catch(() => undefined);
    await plugins.close().catch(() => undefined);
    await deck.close().catch(() => undefined);
    await python.close().catch(() => undefined);
    await store.close();
    throw e;
  }
}
