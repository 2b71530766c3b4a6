/**
 * The workflow builder's model: pure functions over the workflow document (DESIGN.md §4), no DOM. The page
 * (builder/page.ts) keeps one document as its state, changes it only through these functions, and re-renders.
 *
 * - Steps are addressed by paths, as the server's validation names them: a list is `main` or
 *   `main[2].steps` / `main[0].then` / `main[0].else`; a step is `main[2].steps[1]`.
 * - An argument field is text. `#name` is a workflow parameter ({ "param": "name" }), `$name` a variable saved
 *   by an earlier step ({ "var": "name" }); anything else is a literal typed by the argument's JSON Schema
 *   (`\#x` is the literal text "#x"). Nothing here evaluates user text: literals go through JSON.parse at most.
 *
 * By concern: document.ts (types, normalising, the saved form), paths.ts (addressing and moving steps),
 * steps.ts, args.ts (argument text), params.ts, outputs.ts (saved variables and outputs), errors.ts (where
 * a server error belongs). Only types are imported from the zod model, so the browser bundle does not carry zod.
 */
export * from './args.js';
export * from './document.js';
export * from './errors.js';
export * from './outputs.js';
export * from './params.js';
export * from './paths.js';
export * from './steps.js';
