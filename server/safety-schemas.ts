/** The safety routes' components of the API document (server/openapi.ts adds them): the file and the answers. */
import { z } from 'zod';
import { SafetyFile } from '../core/safety/format.js';

const Problem = z.object({
  field: z.string(),
  message: z.string(),
  value: z.unknown().optional(),
  limit: z.unknown().optional().describe('The limit broken: { source, target, min, max, allowed, tray }'),
  rule: z.string().optional().describe('The rule broken (its id)'),
});

export const SAFETY_SCHEMAS: Record<string, z.ZodType> = {
  SafetyStatus: z.looseObject({
    source: z.string().describe('Where the file is: a path, or the database (PostgreSQL)'),
    file: z.unknown().describe('The file as stored (null: none)'),
    error: z.string().nullable().describe('Why every call is blocked (the file does not parse or validate), or null'),
    problems: z.array(z.object({ path: z.string(), message: z.string() })),
    config: z.unknown().describe('The file as the guard reads it (defaults filled in)'),
    states: z.record(z.string(), z.unknown()).describe('Each tracked state: { value | unknown, at, by }'),
  }),
  SafetyVerdict: z.object({ allowed: z.boolean(), problems: z.array(Problem) }),
  SafetyState: z.looseObject({ state: z.string(), value: z.unknown().optional(), unknown: z.string().optional(), at: z.string(), by: z.string() }),
};

/** The file's own schema (input: what may be written). */
export const safetyFileSchema = () => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(SafetyFile, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};
