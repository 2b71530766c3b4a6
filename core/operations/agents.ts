/**
 * The link to `lab agent`s (DESIGN.md §12-13): an agent's connection as server/agents.ts carries it (the
 * hello, its messages, its end), the agents this labdeck knows, and the audit lines of what agents do through
 * the doors. What the link itself audits (a refusal, a name bound) core/hosts/agent.ts writes, as before.
 */
import type { Agents, AgentSocket } from '../hosts/agent.js';
import type { AgentToken } from '../hosts/agent-names.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

/** A connected agent's link, as `connect` answers it. */
export type AgentLink = NonNullable<Awaited<ReturnType<Agents['connect']>>>;

export function agentOperations(lab: Lab) {
  const { agents } = lab;
  return {
    /** Every agent name known here: connected or not, and the instruments it serves. */
    list(): { name: string; connected: boolean; instruments: string[] }[] {
      return agents.list();
    },

    /** An agent's hello on `socket` (its token checked before the upgrade): its link, or null when refused (the socket closed, saying why). */
    connect(socket: AgentSocket, hello: string, token: AgentToken) {
      return agents.connect(socket, hello, token);
    },

    /** A message from a connected agent: null, or what was wrong with it (the connection closes with it). */
    message(link: AgentLink, text: string): string | null {
      return agents.message(link, text);
    },

    /** The agent's connection ended (`reason` in words): its instruments go offline, its calls fail. */
    disconnected(link: AgentLink, socket: AgentSocket, reason: string): void {
      agents.disconnected(link, socket, reason);
    },

    /** An agent's tool call through the MCP server, as it was asked and what came of it (`agent.tool`). */
    toolCalled(caller: Caller, tool: string, args: unknown, result: unknown): Promise<void> {
      return audit(lab, caller, 'agent.tool', { token: caller.token, tool, arguments: args, result });
    },

    /** A `lab agent` connected with its instruments (`agent.connect`): who made its token, and which token. */
    connected(caller: Caller, agent: { name: string; instruments: string[] }, token: { id: number; of: string }): Promise<void> {
      return audit(lab, caller, 'agent.connect', { agent: agent.name, token_of: token.of, token_id: token.id, instruments: agent.instruments });
    },
  };
}
