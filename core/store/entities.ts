/**
 * The tables as TypeORM EntitySchemas (no decorators). They describe the schema the migrations create;
 * the repositories (repos.ts) talk SQL directly, and a unit test asks TypeORM to diff these schemas against
 * the migrated database, so entities and migrations cannot drift apart.
 *
 * Column types are chosen per dialect where the two disagree: timestamps are `datetime` (UTC text
 * "YYYY-MM-DD HH:MM:SS.SSS", TypeORM's own format) on SQLite and `timestamptz` on PostgreSQL; JSON is `text`
 * on both, encoded and parsed by the repositories. Ids are integer auto-increment (steps: bigint on
 * PostgreSQL, SQLite integers are 64-bit already).
 *
 * Adding a table: add its schema here, a migration per dialect under migrations/, and run the drift test.
 */
import { EntitySchema } from 'typeorm';

export type Dialect = 'sqlite' | 'postgres';

/** Row shapes as the database holds them (snake_case names live in `name:` below). */
export interface UserEntity {
  id: number;
  username: string;
  passwordHash: string;
  role: string;
  createdAt: Date;
}
export interface SessionEntity {
  sid: string;
  data: string;
  expiresAt: Date;
}
export interface ApiTokenEntity {
  id: number;
  userId: number;
  name: string;
  tokenHash: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}
export interface MethodPrefsEntity {
  id: number;
  userId: number;
  instrument: string;
  methodOrder: string;
  hidden: string;
}
export interface StepEntity {
  id: number;
  runId: number | null;
  phase: string | null;
  iteration: number | null;
  stepIndex: number | null;
  instrument: string;
  method: string;
  args: string | null;
  output: string | null;
  status: string;
  error: string | null;
  userId: number | null;
  startedAt: Date;
  endedAt: Date | null;
}
export interface AuditEntity {
  id: number;
  userId: number | null;
  action: string;
  detail: string | null;
  at: Date;
}
export interface SettingEntity {
  key: string;
  value: string;
}

/** The entity schemas for one dialect. */
export function entitySchemas(dialect: Dialect): EntitySchema[] {
  const ts = dialect === 'postgres' ? ('timestamptz' as const) : ('datetime' as const);
  const bigId = dialect === 'postgres' ? ('bigint' as const) : ('integer' as const);

  const User = new EntitySchema<UserEntity>({
    name: 'User',
    tableName: 'users',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_users', generated: 'increment' },
      username: { type: 'text' },
      passwordHash: { type: 'text', name: 'password_hash' },
      role: { type: 'text' },
      createdAt: { type: ts, name: 'created_at' },
    },
    uniques: [{ name: 'uq_users_username', columns: ['username'] }],
  });

  const Session = new EntitySchema<SessionEntity>({
    name: 'Session',
    tableName: 'sessions',
    columns: {
      sid: { type: 'text', primary: true, primaryKeyConstraintName: 'pk_sessions' },
      data: { type: 'text' },
      expiresAt: { type: ts, name: 'expires_at' },
    },
    indices: [{ name: 'ix_sessions_expires_at', columns: ['expiresAt'] }],
  });

  const ApiToken = new EntitySchema<ApiTokenEntity>({
    name: 'ApiToken',
    tableName: 'api_tokens',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_api_tokens', generated: 'increment' },
      userId: { type: 'integer', name: 'user_id' },
      name: { type: 'text' },
      tokenHash: { type: 'text', name: 'token_hash' },
      prefix: { type: 'text' },
      createdAt: { type: ts, name: 'created_at' },
      lastUsedAt: { type: ts, name: 'last_used_at', nullable: true },
    },
    uniques: [{ name: 'uq_api_tokens_token_hash', columns: ['tokenHash'] }],
    indices: [{ name: 'ix_api_tokens_user_id', columns: ['userId'] }],
    foreignKeys: [
      {
        name: 'fk_api_tokens_user',
        target: 'User',
        columnNames: ['userId'],
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
      },
    ],
  });

  const MethodPrefs = new EntitySchema<MethodPrefsEntity>({
    name: 'MethodPrefs',
    tableName: 'method_prefs',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_method_prefs', generated: 'increment' },
      userId: { type: 'integer', name: 'user_id' },
      instrument: { type: 'text' },
      methodOrder: { type: 'text', name: 'method_order' },
      hidden: { type: 'text' },
    },
    uniques: [{ name: 'uq_method_prefs_user_instrument', columns: ['userId', 'instrument'] }],
    foreignKeys: [
      {
        name: 'fk_method_prefs_user',
        target: 'User',
        columnNames: ['userId'],
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
      },
    ],
  });

  const Step = new EntitySchema<StepEntity>({
    name: 'Step',
    tableName: 'steps',
    columns: {
      id: { type: bigId, primary: true, primaryKeyConstraintName: 'pk_steps', generated: 'increment' },
      // No foreign key yet: the runs table comes with a later migration.
      runId: { type: 'integer', name: 'run_id', nullable: true },
      phase: { type: 'text', nullable: true },
      iteration: { type: 'integer', nullable: true },
      stepIndex: { type: 'integer', name: 'step_index', nullable: true },
      instrument: { type: 'text' },
      method: { type: 'text' },
      args: { type: 'text', nullable: true },
      output: { type: 'text', nullable: true },
      status: { type: 'text' },
      error: { type: 'text', nullable: true },
      userId: { type: 'integer', name: 'user_id', nullable: true },
      startedAt: { type: ts, name: 'started_at' },
      endedAt: { type: ts, name: 'ended_at', nullable: true },
    },
    indices: [
      { name: 'ix_steps_run_id', columns: ['runId'] },
      { name: 'ix_steps_instrument_id', columns: ['instrument', 'id'] },
    ],
    foreignKeys: [
      {
        name: 'fk_steps_user',
        target: 'User',
        columnNames: ['userId'],
        referencedColumnNames: ['id'],
        onDelete: 'SET NULL',
      },
    ],
  });

  const Audit = new EntitySchema<AuditEntity>({
    name: 'Audit',
    tableName: 'audit_log',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_audit_log', generated: 'increment' },
      userId: { type: 'integer', name: 'user_id', nullable: true },
      action: { type: 'text' },
      detail: { type: 'text', nullable: true },
      at: { type: ts },
    },
    foreignKeys: [
      {
        name: 'fk_audit_log_user',
        target: 'User',
        columnNames: ['userId'],
        referencedColumnNames: ['id'],
        onDelete: 'SET NULL',
      },
    ],
  });

  const Setting = new EntitySchema<SettingEntity>({
    name: 'Setting',
    tableName: 'settings',
    columns: {
      key: { type: 'text', primary: true, primaryKeyConstraintName: 'pk_settings' },
      value: { type: 'text' },
    },
  });

  return [User, Session, ApiToken, MethodPrefs, Step, Audit, Setting] as EntitySchema[];
}
