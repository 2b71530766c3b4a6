/**
 * What a `lab agent` may say to the server, as zod schemas (issue 26 item 1): every message from an agent is
 * checked against them before anything reads it. A message that does not fit closes that agent's connection
 * with the reason (code 4400); nothing an agent sends can throw in the server. What a message's content may
 * hold beyond its shape (names, schema depth and size, patterns) is ./vet.ts.
 *
 * Limits of a message's fields are stated here; a text longer than its limit (a log line, an error message)
 * is cut, not refused, so a driver that prints much keeps its connection.
 */
import { z } from '../contracts/index.js';
import { AGENT_NAME_RE, HOST_PROTOCOL_VERSION } from '../contracts/host.js';

export { AGENT_NAME_RE };
/** Most instruments one agent serves. */
export const MAX_AGENT_INSTRUMENTS = 256;
/** Most methods of one instrument from an agent. */
export const MAX_AGENT_METHODS = 256;
/** Longest text of an event (a line a driver printed or logged) or an error's message; longer ones are cut. */
export const MAX_AGENT_TEXT = 64 * 1024;

const text = (max: number) => z.string().transform((s) => (s.length > max ? `${s.slice(0, max)}… (cut at ${max} characters)` : s));
const callId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const methodShape = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    safety: z.string().optional(),
    hidden: z.boolean().optional(),
    order: z.number().optional(),
    params: z.record(z.string(), z.unknown()),
    returns: z.record(z.string(), z.unknown()).optional(),
    inferred: z.boolean().optional(),
    inferredFields: z.array(z.string()).optional(),
    async: z.boolean().optional(),
    kind: z.enum(['method', 'property', 'setter']).optional(),
  })
  .loose();

const instrumentShape = z
  .object({
    name: z.string(),
    class: z.string(),
    description: z.string(),
    methods: z.array(methodShape).max(MAX_AGENT_METHODS),
  })
  .loose();

export const AgentHelloSchema = z
  .object({
    type: z.literal('hello'),
    protocol: z.literal(HOST_PROTOCOL_VERSION),
    name: z.string().regex(AGENT_NAME_RE, 'must be a name of letters, digits, ".", "_" and "-", at most 64 (lab agent --name)'),
    host: z.string().max(64).optional(),
    language: z.string().max(64).optional(),
    version: z.string().max(64).optional(),
    instruments: z.array(instrumentShape).max(MAX_AGENT_INSTRUMENTS),
  })
  .loose();

export const AgentMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('result'), id: callId, value: z.unknown() }),
  z.object({
    type: z.literal('error'),
    id: callId,
    error: z
      .object({
        kind: z.string().max(64),
        type: z.string().max(256),
        message: text(MAX_AGENT_TEXT),
        traceback: text(MAX_AGENT_TEXT).optional(),
        field: z.string().max(256).optional(),
      })
      .loose(),
  }),
  z.object({
    type: z.literal('event'),
    call: callId.nullable(),
    kind: z.enum(['output', 'log', 'progress']),
    text: text(MAX_AGENT_TEXT),
    level: z.string().max(16).optional(),
  }),
]);

export type AgentHello = z.infer<typeof AgentHelloSchema>;
export type AgentMessage = z.infer<typeof AgentMessageSchema>;

/** The first problem of a zod failure, as `field: problem` (for a close reason). */
function firstIssue(error: z.ZodError): string {
  const i = error.issues[0];
  const where = i?.path.length ? i.path.join('.') : 'the message';
  return `${where}: ${i?.message ?? 'does not fit the protocol'}`;
}

/** Parse one text message of an agent against `schema`: the message, or why it does not fit. */
export function parseAgentText<T extends z.ZodType>(schema: T, text: string): { ok: true; msg: z.infer<T> } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const r = schema.safeParse(json);
  return r.success ? { ok: true, msg: r.data } : { ok: false, reason: firstIssue(r.error) };
}
