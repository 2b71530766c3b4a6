/** Fake deck descriptions for tests that need schemas but no instruments. */
import type { JSONSchema, MethodSchema } from '../../core/contracts/index.js';

/** A method as the deck describes it, with plain defaults: `params` is its arguments' JSON Schema. */
export function methodSchema(name: string, params: JSONSchema, extra: Partial<MethodSchema> = {}): MethodSchema {
  return {
    name,
    description: '',
    safety: 'idempotent',
    hidden: false,
    order: 0,
    params,
    inferred: false,
    inferredFields: [],
    ...extra,
  };
}

/**
 * `value` as `schema` reads it: its objects' unknown fields dropped, so `expect(exactly(s, v)).toEqual(v)`
 * holds only when the value has every field the declaration has, of its type, and no field more.
 */
export function exactly<T>(schema: { parse(v: unknown): T }, value: unknown): T {
  return schema.parse(value);
}
