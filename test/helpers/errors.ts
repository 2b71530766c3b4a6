/** Catching the LabError a test provokes. */
import { LabError } from '../../core/errors.js';

/**
 * The LabError `fn` throws, or `p` rejects with: fails the test when it is something else, and when `fn`
 * returns or `p` resolves.
 */
export function labError(fn: () => unknown): LabError;
export function labError(p: Promise<unknown>): Promise<LabError>;
export function labError(x: (() => unknown) | Promise<unknown>): LabError | Promise<LabError> {
  if (typeof x !== 'function') {
    return x.then(() => {
      throw new Error('expected a rejection with a LabError');
    }, asLabError);
  }
  try {
    x();
  } catch (e) {
    return asLabError(e);
  }
  throw new Error('expected a LabError');
}

function asLabError(e: unknown): LabError {
  expect(e).toBeInstanceOf(LabError);
  return e as LabError;
}
