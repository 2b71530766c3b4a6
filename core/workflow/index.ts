/** Workflows: the model, validation against the deck, config rows, and the interpreter (DESIGN.md §4). */
export * from './model.js';
export { validateWorkflow, stepPaths, walkSteps, instrumentsOf, countSteps, formatPath, type DeckSchemas, type StepVisit } from './validate.js';
export { checkConfigRows, repeatRow, coerceValue, isTypeRow, MAX_REPEAT, type RowOptions } from './config.js';
export { runSteps, outputsOf, compare, evaluateCondition, resolveArg, DEFAULT_PAUSE_MESSAGE, type StepAt, type RunControl, type Scope } from './interpreter.js';
export { checkValue, acceptedTypes, deepEqual } from './jsonschema.js';
