/**
 * The units of a workflow's columns (its parameters and outputs), from what the deck's schemas say: a driver's
 * `Annotated[float, Unit("mL")]` (ivoryOS's marker, read by the Python host) puts `x-unit` on the argument or
 * the return value. A parameter takes the unit of the first argument it is passed to; an output (or a field of
 * one) takes the unit of the value it reports. Shown in the data CSV's header and the plots' axes.
 */
import type { JSONSchema } from '../contracts/index.js';
import { outputName, sourceOf, type Output, type Step } from './model.js';
import { outputSchema, walkSteps, type DeckSchemas } from './validate.js';

/** The unit a schema declares (`x-unit`, or `unit`), if any. */
export function unitOf(schema: JSONSchema | undefined | null): string | undefined {
  const u = schema?.['x-unit'] ?? schema?.unit;
  return typeof u === 'string' && u.trim() ? u.trim() : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{ column: unit }` for the columns of a workflow snapshot (its outputs, and `columns`: fields of them too) (any shape tolerated) whose unit the deck declares. */
export function columnUnits(snapshot: unknown, deck: DeckSchemas, columns: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(snapshot)) return out;
  const main = (Array.isArray(snapshot.main) ? snapshot.main : []) as Step[];
  const steps = [...(Array.isArray(snapshot.prep) ? snapshot.prep : []), ...main, ...(Array.isArray(snapshot.cleanup) ? snapshot.cleanup : [])] as Step[];
  const paramOf = (step: Step, visit: (arg: string, param: string) => void) => {
    if (step.kind !== 'call' || !isRecord(step.args)) return;
    for (const [arg, a] of Object.entries(step.args as Record<string, unknown>)) if (isRecord(a) && typeof a.param === 'string') visit(arg, a.param);
  };
  walkSteps(steps, 'steps', (step) =>
    paramOf(step, (arg, param) => {
      if (out[param] || step.kind !== 'call') return;
      try {
        const props = deck.schema(step.instrument).methods.find((m) => m.name === step.method)?.params.properties as Record<string, JSONSchema> | undefined;
        const unit = unitOf(props?.[arg]);
        if (unit) Object.defineProperty(out, param, { value: unit, enumerable: true, writable: true, configurable: true });
      } catch {
        // an instrument the deck does not have now: no unit
      }
    }),
  );
  const outputs = (Array.isArray(snapshot.outputs) ? snapshot.outputs : []) as Output[];
  for (const name of [...outputs.map(outputName), ...columns]) {
    const source = sourceOf(outputs, name);
    const unit = source ? unitOf(outputSchema({ main }, deck, source)?.schema) : undefined;
    if (unit && !out[name]) Object.defineProperty(out, name, { value: unit, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A column's header with its unit: `volume (mL)`; the CSV readers take `volume` back (core/files/csv.ts). */
export const withUnit = (column: string, units: Record<string, string>): string => (Object.hasOwn(units, column) ? `${column} (${units[column]})` : column);
