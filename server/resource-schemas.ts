/** The answers of the resources, preflight and deck-version routes (server/routes/resources.tsx), for the API document. */
import { z } from 'zod';

const Resource = z.looseObject({
  name: z.string(),
  kind: z.enum(['consumable', 'liquid', 'container', 'sample']),
  quantity: z.number(),
  unit: z.string(),
  rows: z.int().nullable(),
  columns: z.int().nullable(),
  location: z.string().nullable(),
  identity: z.string().nullable(),
  in_doubt: z.int().describe('In-doubt calls that may have used it, to settle'),
  updated_at: z.string(),
});
const ResourceMove = z.looseObject({
  id: z.int(),
  resource: z.string(),
  kind: z.string().describe('create, set, topup, consume, produce, move, import, delete'),
  status: z.enum(['done', 'in-doubt', 'settled-used', 'settled-unused']),
  delta: z.number().nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  step_id: z.int().nullable(),
  run_id: z.int().nullable(),
  at: z.string(),
});
const Rule = z.looseObject({ target: z.string(), method: z.string(), resource: z.unknown(), amount: z.unknown().optional(), to: z.unknown().optional() });
const Band = z.object({ p10: z.number(), p50: z.number(), p90: z.number() });

export const RESOURCE_SCHEMAS = {
  Resource,
  ResourceMove,
  ResourceList: z.looseObject({ resources: z.array(Resource), in_doubt: z.array(ResourceMove) }),
  ResourceDetail: z.looseObject({ resource: Resource, moves: z.array(ResourceMove), positions: z.array(z.object({ name: z.string(), holds: z.array(z.string()) })).optional() }),
  ResourceImported: z.object({ created: z.int(), updated: z.int() }),
  ConsumptionRules: z.array(Rule),
  PreflightBody: z.looseObject({ workflow: z.string() }).describe('The fields of POST /app/executions/config, or of a campaign'),
  Preflight: z.looseObject({
    ok: z.boolean(),
    problems: z.array(z.object({ field: z.string().optional(), message: z.string() })),
    resources: z.array(z.looseObject({ name: z.string(), needed: z.number(), available: z.number() })),
    duration_s: Band.nullable(),
    duration_reason: z.string().optional(),
    steps: z.array(z.looseObject({ path: z.string(), kind: z.string(), times: z.number(), duration_s: Band.nullable() })),
    iterations: z.int(),
    deck_version: z.int().nullable(),
    safety: z
      .looseObject({
        allowed: z.boolean(),
        problems: z.array(z.looseObject({ field: z.string().optional(), step: z.string().optional(), message: z.string(), limit: z.unknown().optional(), value: z.unknown().optional() })),
        error: z.string().nullable(),
        source: z.string(),
        note: z.string(),
      })
      .nullable()
      .describe("The safety guard's verdict on the values known before the task moves (its problems are among `problems` too); null where no guard is installed"),
  }),
  DeckVersions: z.looseObject({ current: z.int().nullable(), versions: z.array(z.looseObject({ id: z.int(), reason: z.string() })), broken: z.array(z.looseObject({ workflow: z.string() })) }),
  DeckDiff: z.looseObject({ from: z.int().nullable(), to: z.int(), changes: z.array(z.looseObject({})), lines: z.array(z.string()) }),
};
