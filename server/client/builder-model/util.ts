/** Small helpers the builder model's modules share (not part of its interface). */

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
/** A number as typed in a field. */
export const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
