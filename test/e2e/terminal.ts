/**
 * A real terminal for end-to-end tests: a program runs in a tmux pane of a fixed size (a pty, as in a lab's
 * terminal window), a test types keys into it and reads the screen. Each terminal has its own tmux server.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor as poll } from '../helpers/wait.js';

export interface Terminal {
  /** The screen as the operator sees it now (trailing blank lines dropped). */
  screen(): string;
  /** Type keys (tmux key names: `r`, `Enter`, `C-c`). */
  keys(...keys: string[]): void;
  /** Wait until the screen shows `what`; fails with the screen after `ms`. */
  waitFor(what: string | RegExp, ms?: number): Promise<string>;
  /** Wait for the program to end; its exit code. */
  exitCode(ms?: number): Promise<number>;
  close(): void;
}

let n = 0;

/** Run `argv` in a new terminal of `columns` × `rows`, in `cwd`, with `env` added to this process's (CI left out: a person's terminal has none). */
export function openTerminal(argv: string[], opts: { cwd: string; env?: Record<string, string>; columns?: number; rows?: number }): Terminal {
  const socket = `labdeck-e2e-${process.pid}-${n++}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const env = Object.entries({ ...opts.env, TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${v}`);
  // the program's exit code is written by a shell around it (tmux's own #{pane_dead_status} is at times empty)
  const exitFile = join(tmpdir(), `${socket}.exit`);
  const run = ['sh', '-c', 'env -u CI -u CONTINUOUS_INTEGRATION "$@"; echo $? > "$0"', exitFile, ...(env.length ? ['env', ...env] : []), ...argv];
  tmux('new-session', '-d', '-s', 'lab', '-x', String(opts.columns ?? 120), '-y', String(opts.rows ?? 40), '-c', opts.cwd, ...run);
  tmux('set-option', '-t', 'lab', 'remain-on-exit', 'on'); // the last screen stays to be read
  const screen = () => tmux('capture-pane', '-p', '-t', 'lab').replace(/\s+$/, '');
  const until = async <T>(ms: number, probe: () => T | undefined, what: string): Promise<T> => {
    let got: T | undefined;
    await poll(() => (got = probe()) !== undefined, what, ms, 50).catch(() => {
      throw new Error(`the terminal never showed ${what}; its screen:\n${screen()}`);
    });
    return got as T;
  };
  return {
    screen,
    keys: (...keys) => void tmux('send-keys', '-t', 'lab', ...keys),
    waitFor: (what, ms = 20_000) =>
      until(
        ms,
        () => {
          const s = screen();
          return (typeof what === 'string' ? s.includes(what) : what.test(s)) ? s : undefined;
        },
        String(what),
      ),
    exitCode: (ms = 20_000) =>
      until(
        ms,
        () => {
          const text = existsSync(exitFile) ? readFileSync(exitFile, 'utf8') : '';
          return /^\d+\n$/.test(text) ? Number(text) : undefined;
        },
        'the program ending',
      ),
    close: () => {
      rmSync(exitFile, { force: true });
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
}
