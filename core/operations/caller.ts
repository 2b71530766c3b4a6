/**
 * Who asks for an operation, and through which door (DESIGN.md §15). Every operation in core/operations takes
 * one: the door translates its own notion of a caller (a session, an API token, an MCP token, `lab run`'s
 * terminal, another labdeck) into this, and the operation decides from it alone (the check, the approval an
 * agent needs, the audit line's user and `via`). Types only: nothing here knows a door.
 */

/** The ways into the lab: /app's routes, the /ivoryos mount, the MCP server, the CLI, another labdeck. */
export type Door = 'app' | 'ivoryos' | 'mcp' | 'cli' | 'relay';
export const DOORS: readonly Door[] = ['app', 'ivoryos', 'mcp', 'cli', 'relay'];

/** How the caller proved who they are: a browser session, an account's API token, an MCP token, none (the CLI, a relayed request). */
export type CallerScope = 'session' | 'api' | 'mcp' | 'none';

export interface Caller {
  /** The account acting (null: nobody logged in, e.g. `lab run` or a request relayed without a user). */
  userId: number | null;
  /** The account's name (for messages), or what the door calls itself (`lab run`). */
  name: string;
  /** The account's role; null without an account. */
  role: 'admin' | 'operator' | null;
  scope: CallerScope;
  door: Door;
  /** The token the caller came with, when it matters to the record (an MCP token: the audit names it). */
  token?: { id: number; name: string };
  /**
   * A request another labdeck relayed (door `relay`): whether a person or an agent asked it there. That
   * labdeck made the checks only a door's caller allows (the approval an agent needs) and wrote the audit line.
   */
  relayedBy?: 'person' | 'agent';
}

/** An AI agent: an MCP token's caller. What the lab's approval policy marks waits for a person. */
export const isAgent = (c: Caller): c is Caller & { token: { id: number; name: string }; userId: number } => c.scope === 'mcp' && c.userId !== null && c.token !== undefined;

/** The caller as the runner's controls know it: an agent's pause is undone by an agent, a person's only by a person. */
export const controlBy = (c: Caller): 'person' | 'agent' => c.relayedBy ?? (isAgent(c) ? 'agent' : 'person');

/** The name of a caller another labdeck relayed without saying who asked. */
export const RELAYED = 'another labdeck';

/** A request relayed from another labdeck: who asked it there (an account or none) and whether an agent did. */
export const relayCaller = (asked: { userId?: number | null; name?: string; by?: 'person' | 'agent' }): Caller => ({
  userId: asked.userId ?? null,
  name: asked.name ?? RELAYED,
  role: null,
  scope: 'none',
  door: 'relay',
  relayedBy: asked.by ?? 'person',
});

/** Asked here by another labdeck: done here, never sent on, and written to no audit log (the asker's labdeck writes it). */
export const isRelayed = (c: Caller): boolean => c.door === 'relay';

/** A caller with no account through `door` (the CLI's `lab run`, a request another labdeck relays). */
export const systemCaller = (door: Door, name: string): Caller => ({ userId: null, name, role: null, scope: 'none', door });
