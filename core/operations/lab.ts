/**
 * What the operations work with: the runtime's parts (not the Runtime itself, so the runtime can hold the
 * operations without an import circle), and the one way an operation writes its audit line.
 */
import type { Accounts } from '../accounts/index.js';
import type { Attention } from '../attention/index.js';
import type { AgentCaller, Approvals } from '../approvals/index.js';
import type { BrandingService } from '../branding.js';
import type { Campaigns } from '../campaign/index.js';
import type { Deck } from '../deck/index.js';
import type { DeckWatch } from '../deck/watch.js';
import { LabError } from '../errors.js';
import type { FileStore } from '../files/store.js';
import type { Runner } from '../runner/index.js';
import type { Agents } from '../hosts/agent.js';
import type { PythonModules } from '../hosts/index.js';
import type { Notifications } from '../notify/index.js';
import type { PluginHost } from '../plugins/index.js';
import type { Resources } from '../resources/index.js';
import type { Preflight } from '../resources/preflight.js';
import type { SafetyGuard } from '../safety/index.js';
import type { ApprovalRow, Store } from '../store/types.js';
import { isAgent, type Caller } from './caller.js';

export interface Lab {
  readonly store: Store;
  readonly deck: Deck;
  readonly runner: Runner;
  readonly campaigns: Campaigns;
  readonly approvals: Approvals;
  readonly files: FileStore;
  readonly python: PythonModules;
  readonly consoleTimeoutMs: number;
  readonly branding: BrandingService;
  readonly accounts: Accounts;
  readonly safety: SafetyGuard;
  readonly notifications: Notifications;
  readonly resources: Resources;
  readonly preflight: Preflight;
  readonly attention: Attention;
  /** The `lab agent`s connected to this labdeck (instruments on other PCs). */
  readonly agents: Agents;
  /** The plugin folders' drivers and optimizers (what failed to load, for the start-up lines). */
  readonly plugins: Pick<PluginHost, 'errors'>;
  /** The startup deck file (null without one), and its watch (null without `watch`): a change needs a restart. */
  readonly deckFile: string | null;
  readonly deckWatch: DeckWatch | null;
  /** Where the data folder is (an input step's file is kept there). */
  readonly dataDir: string;
}

/**
 * An operation's audit line: the caller's account, the action, the detail, and where it came from when it is
 * not /app (`via`: `ivoryos`, `mcp`, `cli`, `relay`) with an agent's token. One line per operation, whichever
 * door it came through: the same action and detail from every door, `via` and `token` apart.
 */
export function audit(lab: Pick<Lab, 'store'>, caller: Caller, action: string, detail: Record<string, unknown> = {}): Promise<void> {
  const where = caller.door === 'app' ? {} : { via: caller.door };
  const token = isAgent(caller) && !('token' in detail) ? { token: caller.token } : {};
  return lab.store.audit.add({ userId: caller.userId, action, detail: { ...detail, ...where, ...token } });
}

/** The caller as core/approvals knows an agent. */
export function agentOf(caller: Caller): AgentCaller {
  if (!isAgent(caller)) throw new LabError('internal', 'Only an agent (an MCP token) asks through the approval inbox.');
  return { user: { id: caller.userId, username: caller.name, role: caller.role ?? 'operator' }, token: caller.token };
}

/** The caller as the runner's queue checks know a user (who may delete or rename a task). */
export const userOf = (caller: Caller) => (caller.userId === null ? undefined : { id: caller.userId, role: caller.role ?? 'operator' });

/** An operation's outcome that may wait for a person (an agent's, under the approval policy): done, or the request. */
export type MaybeRequest<T> = { done: T } | { request: ApprovalRow };

/** The outcome of an operation a person asked for (never a request): its value. */
export function done<T>(o: MaybeRequest<T>): T {
  if ('request' in o) throw new LabError('internal', `This waits for approval (request ${o.request.id}), which only an agent's operation does.`);
  return o.done;
}
