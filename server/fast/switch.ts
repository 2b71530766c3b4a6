/**
 * The fast path's one switch (issue 27 item 2). Express is made fast from inside by four pieces in this
 * folder, each with a rule of its own for the code around it:
 *
 * - `lane.ts`: an instrument call goes straight to its route's handlers (the router is read once), and
 *   helmet's headers are set in one step (`fixedHeaders`);
 * - `dispatch.ts`: a request skips the areas' routers whose routes cannot match its first path segment;
 * - `json-body.ts`: a plain JSON body is read without body-parser's layers;
 * - `http-server.ts`: requests and responses are made with every field answering adds already declared.
 *
 * Off, plain Express does all of it (helmet, express.json, every router in turn, Node's own request and
 * response classes), and every answer is the same: CI runs the API tests once that way (.ci/run), so a
 * difference shows up as a failing test rather than as a rule someone forgot.
 *
 * `LABDECK_FAST_PATH`: unset, `1` or `on`: on; `0`, `off`, `false` or `no`: off; anything else stops
 * start-up with an error naming the variable. Read where an app or its HTTP server is made (`lab serve` reads it
 * once and passes it to both).
 */
import { LabError } from '../../core/errors.js';

export const FAST_PATH_ENV = 'LABDECK_FAST_PATH';

const ON = ['', '1', 'on'];
const OFF = ['0', 'off', 'false', 'no'];

/** The switch read from a value of LABDECK_FAST_PATH (undefined: not set); LabError invalid_input naming it otherwise. */
export function parseFastPath(value: string | undefined): boolean {
  if (value === undefined) return true;
  const v = value.trim().toLowerCase();
  if (ON.includes(v)) return true;
  if (OFF.includes(v)) return false;
  throw new LabError('invalid_input', `${FAST_PATH_ENV} must be 1 or on (the fast path, the default) or 0, off, false or no (plain Express), not ${JSON.stringify(value)}.`, [
    { field: FAST_PATH_ENV, message: 'must be 1, on, 0, off, false or no' },
  ]);
}

/** Whether the fast path is on: LABDECK_FAST_PATH as it is now. */
export function fastPath(): boolean {
  return parseFastPath(process.env[FAST_PATH_ENV]);
}
