/**
 * What the live deck says about a workflow's outputs: whether an output (or a field of one) is a number, for
 * the campaign page (which output to propose as the objective) and the campaign's own checks.
 */
import { acceptedTypes } from './jsonschema.js';
import { sourceOf, type Workflow } from './model.js';
import { outputSchema, type DeckSchemas } from './validate.js';

export type OutputKind = 'number' | 'other' | 'unknown';

/**
 * `number` when the method of the main step that saves it declares a number (or an integer) there, `other` when
 * it declares something else (an object, a string, a list…), `unknown` when nothing is declared (a Python
 * method without a return hint, a field of a plain `-> dict`) or `name` is no output of the workflow.
 */
export function outputKind(wf: Pick<Workflow, 'main' | 'outputs'>, deck: DeckSchemas, name: string): OutputKind {
  // a stored document is read as it is: parts may be missing
  const source = Array.isArray(wf.outputs) ? sourceOf(wf.outputs, name) : null;
  const declared = source === null || !Array.isArray(wf.main) ? null : outputSchema(wf, deck, source);
  const types = declared ? acceptedTypes(declared.schema) : null;
  if (!types) return 'unknown';
  return types.has('number') || types.has('integer') ? 'number' : 'other';
}
