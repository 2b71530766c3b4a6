/**
 * The store's repository interfaces: what the rest of the runtime may ask of the database. The
 * implementation (TypeORM, SQLite or PostgreSQL) lives beside this file; nothing outside core/store
 * touches TypeORM.
 */
export type Role = 'admin' | 'operator';

export interface UserRow {
  id: number;
  username: string;
  passwordHash: string;
  role: Role;
  createdAt: Date;
}

export interface TokenRow {
  id: number;
  userId: number;
  name: string;
  /** First characters of the token, for display; the token itself is never stored. */
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** A step record: one instrument call, direct (runId null) or inside a workflow run. */
export interface StepRow {
  id: number;
  runId: number | null;
  phase: string | null;
  iteration: number | null;
  stepIndex: number | null;
  instrument: string;
  method: string;
  args: unknown;
  output: unknown;
  status: 'ok' | 'error' | 'running' | 'in-doubt';
  error: string | null;
  userId: number | null;
  startedAt: Date;
  endedAt: Date | null;
}

export type NewStep = Omit<StepRow, 'id'>;

export interface MethodPrefs {
  order: string[];
  hidden: string[];
}

export interface AuditRow {
  id: number;
  userId: number | null;
  action: string;
  detail: unknown;
  at: Date;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  users: {
    count(): Promise<number>;
    list(): Promise<UserRow[]>;
    byId(id: number): Promise<UserRow | null>;
    byName(username: string): Promise<UserRow | null>;
    create(u: { username: string; passwordHash: string; role: Role }): Promise<UserRow>;
    setPassword(id: number, passwordHash: string): Promise<void>;
  };
  sessions: {
    get(sid: string): Promise<{ data: string; expiresAt: Date } | null>;
    set(sid: string, data: string, expiresAt: Date): Promise<void>;
    touch(sid: string, expiresAt: Date): Promise<void>;
    destroy(sid: string): Promise<void>;
    /** Delete expired sessions; returns how many. */
    prune(now?: Date): Promise<number>;
  };
  tokens: {
    create(t: { userId: number; name: string; tokenHash: string; prefix: string }): Promise<TokenRow>;
    /** The user a token hash belongs to, or null; updates last-used time. */
    userFor(tokenHash: string): Promise<UserRow | null>;
    list(userId: number): Promise<TokenRow[]>;
    revoke(userId: number, id: number): Promise<boolean>;
  };
  prefs: {
    get(userId: number, instrument: string): Promise<MethodPrefs>;
    setOrder(userId: number, instrument: string, order: string[]): Promise<void>;
    setHidden(userId: number, instrument: string, method: string, hidden: boolean): Promise<void>;
  };
  steps: {
    insert(step: NewStep): Promise<number>;
    update(id: number, patch: Partial<NewStep>): Promise<void>;
    get(id: number): Promise<StepRow | null>;
    /** The latest calls to one instrument, newest first. */
    recent(instrument: string, limit: number): Promise<StepRow[]>;
  };
  audit: {
    add(a: { userId: number | null; action: string; detail: unknown }): Promise<void>;
    list(limit?: number): Promise<AuditRow[]>;
  };
  settings: {
    get<T = unknown>(key: string): Promise<T | null>;
    set(key: string, value: unknown): Promise<void>;
  };
  close(): Promise<void>;
}
