/**
 * Whose an agent's name is (issue 26 item 8). Any agent token may connect, and the name an agent gives is its
 * own word: without this, one PC's token could connect under another PC's name while that PC is offline,
 * receive its calls, answer them with made-up results, and lock the real PC out.
 *
 * So a name belongs to one agent token, kept in the database (settings `agent.owner:<name>`: the token's id
 * and label), shared by every labdeck on it:
 * - the first token that connects under a name takes it (its audit line: `agent.name.bound`);
 * - an admin making an agent token may name the agent it is for (`agent_name`): the name is bound to that
 *   token at once, taken from whichever token had it (`agent.name.bound`, with the admin and the old token);
 *   this is also how a name is handed on (a PC's new token) or released from a token that is gone;
 * - another token claiming a bound name is refused (close code 4403, and `agent.refused` in the audit log).
 * Revoking a token does not free its names: the PC's next token is bound to them by the admin who makes it.
 */
import type { Store } from '../store/types.js';

export interface AgentToken {
  id: number;
  name: string;
}

interface Owner {
  token_id: number;
  token_name: string;
  bound_at: string;
  /** Who bound it: null when it was the token's first connection. */
  by_user: number | null;
}

const key = (agent: string) => `agent.owner:${agent}`;

export class AgentNames {
  constructor(private readonly store: Store) {}

  /**
   * May `token` serve under `agent`? True when the name is its own, or free (it is then bound to it); false
   * with the owner's token label when another token has it.
   */
  async claim(agent: string, token: AgentToken): Promise<{ ok: true; bound: boolean } | { ok: false; owner: string }> {
    const mine: Owner = { token_id: token.id, token_name: token.name, bound_at: new Date().toISOString(), by_user: null };
    if (await this.store.settings.claim(key(agent), mine)) return { ok: true, bound: true };
    const owner = await this.store.settings.get<Owner>(key(agent));
    if (owner?.token_id === token.id) return { ok: true, bound: false };
    return { ok: false, owner: owner?.token_name ?? 'another token' };
  }

  /** An admin binds `agent` to `token` (taking it from any other). Returns the token that had it, if any. */
  async bind(agent: string, token: AgentToken, byUser: number): Promise<string | null> {
    const before = await this.store.settings.get<Owner>(key(agent));
    await this.store.settings.set(key(agent), { token_id: token.id, token_name: token.name, bound_at: new Date().toISOString(), by_user: byUser } satisfies Owner);
    return before && before.token_id !== token.id ? before.token_name : null;
  }
}
