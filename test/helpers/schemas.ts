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
