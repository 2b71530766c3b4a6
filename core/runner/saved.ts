/** The message of a call step whose saved output a campaign cannot use (its check said why). */
import { cutText, isCutResult } from '../result-limit.js';

export function savedProblem(instrument: string, method: string, output: unknown, problem: string): string {
  // a cut result says so first: the instrument answered, but more than a record keeps (core/result-limit.ts)
  if (isCutResult(output)) return `${instrument}.${method} returned ${cutText(output)}: ${problem}`;
  return `${instrument}.${method} returned ${(JSON.stringify(output) ?? String(output)).slice(0, 200)}: ${problem}`;
}
