/**
 * What the CLI commands share: the streams they talk through (an `io` object, so tests run them in-process),
 * exit codes, and a plain-text table. Commands return their exit code instead of calling process.exit.
 */
import { isLabError } from '../core/errors.js';
import { errorText } from '../core/deck/util.js';

/** Exit codes of every `lab` command. */
export const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface CliIO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
}

export const processIO = (): CliIO => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });

export const println = (out: CliIO['stdout'] | CliIO['stderr'], line = '') => out.write(`${line}\n`);

/** A user mistake (bad name, existing file, ...): printed as `lab: message`, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** LabError codes that mean "the input was wrong" rather than "something failed". */
const BAD_INPUT = new Set(['invalid_input', 'conflict', 'not_found', 'forbidden']);

export function exitCodeFor(e: unknown): ExitCode {
  if (e instanceof UsageError) return EXIT.badInput;
  if (isLabError(e) && BAD_INPUT.has(e.code)) return EXIT.badInput;
  return EXIT.failed;
}

/** Run a command body; errors become `lab: message` on stderr and their exit code. */
export async function guard(io: CliIO, body: () => Promise<ExitCode>): Promise<ExitCode> {
  try {
    return await body();
  } catch (e) {
    println(io.stderr, `lab: ${errorText(e)}`);
    return exitCodeFor(e);
  }
}

/** Left-aligned columns separated by two spaces, with a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
