/**
 * `lab user`'s operations (docs/architecture.md): accounts on the lab's database alone, without the deck or
 * the runner, so the lab's owner can add an account or set a password while `lab serve` is stopped (or
 * running). Each is audited as the same change through /app is (`user.add`, `user.password`, `via: cli`).
 * Whoever runs it on the lab PC owns the data folder: a new password needs no old one.
 */
import { Accounts, type PublicUser } from '../accounts/index.js';
import { LabError } from '../errors.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import type { Caller } from './caller.js';
import { audit } from './lab.js';

/** An account as `lab user list` shows it. */
export interface AccountLine {
  username: string;
  role: 'admin' | 'operator';
  createdAt: Date;
}

export interface AccountBook {
  /** Is there an account (deleted ones too) of this name? */
  exists(name: string): Promise<boolean>;
  /** The accounts that are not deleted, oldest first. */
  list(): Promise<AccountLine[]>;
  /** Add an account (sign-up may be closed: the owner adds anyway); the first one is an admin. `first`: it was. */
  add(caller: Caller, name: string, password: string, opts: { admin?: boolean }): Promise<{ user: PublicUser; first: boolean }>;
  /** Set a password without the old one; the account's sessions end (how many). */
  setPassword(caller: Caller, name: string, password: string): Promise<number>;
  close(): Promise<void>;
}

function book(store: Store): AccountBook {
  const accounts = new Accounts(store);
  const lab = { store };
  return {
    async exists(name) {
      return (await store.users.byName(name)) !== null;
    },
    async list() {
      return (await store.users.list()).map((u) => ({ username: u.username, role: u.role, createdAt: u.createdAt }));
    },
    async add(caller, name, password, opts) {
      const first = (await store.users.count()) === 0;
      const user = await accounts.signup(name, password, { role: opts.admin ? 'admin' : undefined, bypassClosed: true });
      await audit(lab, caller, 'user.add', { user_id: user.id, username: user.username, role: user.role });
      return { user, first };
    },
    async setPassword(caller, name, password) {
      const row = await store.users.byName(name);
      if (!row || row.deletedAt) throw new LabError('not_found', `No user "${name}".`);
      const ended = await accounts.resetPassword(name, password);
      await audit(lab, caller, 'user.password', { user_id: row.id, username: row.username, sessions_ended: ended });
      return ended;
    },
    close: () => store.close(),
  };
}

/** Open the lab's database (the one `lab serve` uses with these options) for `lab user`. */
export async function openAccountBook(opts: { db?: string; dataDir: string }): Promise<AccountBook> {
  return book(await openStore({ url: opts.db, dataDir: opts.dataDir }));
}
