/**
 * `lab user add|list|passwd`: accounts on the database alone (no plugins, no deck), through the account
 * operations (core/operations/account-book.ts; audited `user.add`, `user.password` with `via: cli`).
 * Whoever can run this on the lab PC owns the data folder, so `passwd` needs no old password.
 *
 * Passwords come from standard input with `--password-stdin` (its first line), or are typed twice at a
 * terminal prompt that does not echo. Never from an argument: those end up in shell history and `ps`.
 */
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';
import type { Command, OptionValues } from '@commander-js/extra-typings';
import { MIN_PASSWORD, USERNAME_RE } from '../core/accounts/index.js';
import { openAccountBook, type AccountBook } from '../core/operations/account-book.js';
import { systemCaller } from '../core/operations/index.js';
import { EXIT, guard, println, processIO, table, UsageError, type CliIO, type ExitCode } from './io.js';

export interface StoreOptions {
  /** Data folder (default `./lab-data`), as for `lab serve`. */
  dataDir?: string;
  /** Database URL, as for `lab serve`. */
  db?: string;
}

export interface PasswordOptions {
  /** Read the password from the first line of standard input. */
  passwordStdin?: boolean;
}

export interface UserAddOptions extends StoreOptions, PasswordOptions {
  admin?: boolean;
}

/** Open the accounts on the database alone (the same database `lab serve` uses with these options), run `body`, close it. */
async function withAccounts<T>(opts: StoreOptions, body: (accounts: AccountBook) => Promise<T>): Promise<T> {
  const accounts = await openAccountBook({ db: opts.db, dataDir: resolve(opts.dataDir ?? 'lab-data') });
  try {
    return await body(accounts);
  } finally {
    await accounts.close();
  }
}

/** `lab user` as the operations know a caller: nobody logged in, through the CLI. */
const CLI = systemCaller('cli', 'lab user');

function checkName(name: string): void {
  if (!USERNAME_RE.test(name)) throw new UsageError(`bad user name "${name}": use 1-64 letters, digits or . _ @ -`);
}

function checkPassword(pw: string): void {
  if (pw.length < MIN_PASSWORD) throw new UsageError(`the password must be at least ${MIN_PASSWORD} characters`);
  if (pw.length > 1024) throw new UsageError('the password must be at most 1024 characters');
}

/** The first line of a stream (without its line ending); the rest is left unread. */
export function readFirstLine(stdin: CliIO['stdin']): Promise<string> {
  return new Promise((res, rej) => {
    const decoder = new StringDecoder('utf8');
    let buf = '';
    const cleanup = () => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onError);
      stdin.pause();
    };
    const finish = (text: string) => {
      cleanup();
      res(text.replace(/\r$/, ''));
    };
    const onData = (chunk: Buffer | string) => {
      buf += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      const nl = buf.indexOf('\n');
      if (nl >= 0) finish(buf.slice(0, nl));
    };
    const onEnd = () => finish(buf + decoder.end());
    const onError = (e: Error) => {
      cleanup();
      rej(e);
    };
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.on('error', onError);
    stdin.resume();
  });
}

/**
 * Ask at a terminal without echo: each prompt is written to stdout, the typed line never is. `check` runs
 * on each answer as it comes (so a too-short password is refused before the confirmation prompt).
 */
export function promptHidden(io: CliIO, prompts: string[], check: (answer: string, i: number) => void = () => {}): Promise<string[]> {
  // readline in terminal mode puts the TTY in raw mode (no echo by the terminal) and echoes to its
  // output itself: a sink that drops everything mutes it.
  const sink = new Writable({ write: (_chunk, _enc, cb) => cb() });
  const rl = createInterface({ input: io.stdin, output: sink, terminal: true });
  const answers: string[] = [];
  return new Promise((res, rej) => {
    let settled = false;
    const stop = (err: Error | null) => {
      if (settled) return;
      settled = true;
      rl.close();
      if (err) rej(err);
      else res(answers);
    };
    rl.on('line', (line) => {
      if (settled) return;
      io.stdout.write('\n');
      try {
        check(line, answers.length);
      } catch (e) {
        return stop(e as Error);
      }
      answers.push(line);
      if (answers.length === prompts.length) stop(null);
      else io.stdout.write(prompts[answers.length]);
    });
    rl.on('SIGINT', () => {
      io.stdout.write('\n');
      stop(new Error('cancelled'));
    });
    rl.on('close', () => stop(new UsageError('no password entered')));
    io.stdout.write(prompts[0]);
  });
}

/** A new password: from stdin with --password-stdin, else typed twice at a terminal. */
export async function readNewPassword(io: CliIO, opts: PasswordOptions, what = 'Password'): Promise<string> {
  if (opts.passwordStdin) {
    const pw = await readFirstLine(io.stdin);
    if (!pw) throw new UsageError('no password on standard input (--password-stdin reads its first line)');
    checkPassword(pw);
    return pw;
  }
  if (!io.stdin.isTTY) {
    throw new UsageError('no password: standard input is not a terminal, so pipe it in and pass --password-stdin');
  }
  const [a, b] = await promptHidden(io, [`${what}: `, `${what} (again): `], (answer, i) => {
    if (i === 0) checkPassword(answer);
  });
  if (a !== b) throw new UsageError('the two passwords differ; nothing changed');
  return a;
}

/** `lab user add NAME`: an operator, or an admin with `--admin`; the first account is always an admin. */
export function userAdd(name: string, opts: UserAddOptions, io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, async () => {
    checkName(name);
    return withAccounts(opts, async (accounts) => {
      if (await accounts.exists(name)) {
        throw new UsageError(`the user "${name}" already exists (to change its password: lab user passwd ${name})`);
      }
      const password = await readNewPassword(io, opts);
      const { user, first } = await accounts.add(CLI, name, password, { admin: opts.admin });
      const why = first && !opts.admin ? ': the first account is always an admin' : '';
      println(io.stdout, `added user ${user.username} (${user.role})${why}`);
      return EXIT.ok;
    });
  });
}

const stamp = (d: Date) => {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
};

/** `lab user list`: username, role, created (local time); `--json` for scripts. */
export function userList(opts: StoreOptions & { json?: boolean }, io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, () =>
    withAccounts(opts, async (accounts) => {
      const users = await accounts.list();
      if (opts.json) {
        const rows = users.map((u) => ({ username: u.username, role: u.role, created: u.createdAt.toISOString() }));
        println(io.stdout, JSON.stringify(rows, null, 2));
      } else if (users.length === 0) {
        println(io.stdout, 'no users yet: the first one added (lab user add NAME) or signed up is an admin');
      } else {
        println(
          io.stdout,
          table(
            ['USERNAME', 'ROLE', 'CREATED'],
            users.map((u) => [u.username, u.role, stamp(u.createdAt)]),
          ),
        );
      }
      return EXIT.ok;
    }),
  );
}

/** `lab user passwd NAME`: set a new password (no old one needed). */
export function userPasswd(name: string, opts: StoreOptions & PasswordOptions, io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, async () => {
    checkName(name);
    return withAccounts(opts, async (accounts) => {
      if (!(await accounts.exists(name))) throw new UsageError(`no user "${name}" (see lab user list)`);
      const password = await readNewPassword(io, opts, `New password for ${name}`);
      const ended = await accounts.setPassword(CLI, name, password);
      println(io.stdout, `password of ${name} changed; ${ended} session${ended === 1 ? '' : 's'} ended`);
      return EXIT.ok;
    });
  });
}

/** `--data-dir` and `--db`, exactly as `lab serve` has them (the same database by default). */
export function storeOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(c: Command<A, O, G>) {
  return c.option('--data-dir <dir>', 'data folder: database, secret, uploads', 'lab-data').option('--db <url>', 'database URL: sqlite:PATH or postgres://... (default: SQLite in the data folder)');
}

export function registerUserCommands(program: Command) {
  const user = program.command('user').description('manage the accounts of the web app (in the database of --data-dir / --db)');
  storeOptions(user.command('add'))
    .description('add an account: an operator, or an admin with --admin (the first account is always an admin)')
    .argument('<name>', 'user name: 1-64 letters, digits or . _ @ -')
    .option('--admin', 'make the account an admin')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .addHelpText(
      'after',
      [
        '',
        'Without --password-stdin the password is asked twice at the terminal (not echoed).',
        'Examples:',
        '  lab user add alice --admin',
        '  printf "%s\\n" "$PW" | lab user add bob --password-stdin --data-dir /srv/lab-data',
      ].join('\n'),
    )
    .action(async (name, o) => {
      process.exitCode = await userAdd(name, o);
    });
  storeOptions(user.command('list'))
    .description('list the accounts: user name, role, creation time')
    .option('--json', 'print JSON')
    .action(async (o) => {
      process.exitCode = await userList(o);
    });
  storeOptions(user.command('passwd'))
    .description("set an account's password (no old password needed)")
    .argument('<name>', 'user name')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .action(async (name, o) => {
      process.exitCode = await userPasswd(name, o);
    });
}
