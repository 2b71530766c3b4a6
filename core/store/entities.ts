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
import { notifyEntitySchemas } from './notify-entities.js';
import { resourceEntities } from './entities-resources.js';
import { campaignEntities } from './entities-campaigns.js';

export type Dialect = 'sqlite' | 'postgres';

/** Row shapes as the database holds them (snake_case names live in `name:` below). */
export interface UserEntity {
  id: number;
  username: string;
  passwordHash: string;
  role: string;
  createdAt: Date;
  disabledAt: Date | null;
  deletedAt: Date | null;
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
  log: string | null;
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
export interface WorkflowEntity {
  id: number;
  name: string;
  version: number;
  definition: string;
  createdBy: number | null;
  createdAt: Date;
  deletedAt: Date | null;
}
export interface QueueTaskEntity {
  id: number;
  name: string;
  kind: string;
  payload: string;
  status: string;
  position: number;
  runId: number | null;
  createdBy: number | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  hostId: string | null;
  holdsQueue: boolean;
}
export interface RunEntity {
  id: number;
  taskId: number | null;
  name: string;
  workflowName: string;
  workflowVersion: number | null;
  workflow: string;
  parameters: string;
  status: string;
  error: string | null;
  userId: number | null;
  startedAt: Date;
  endedAt: Date | null;
  skipped: number;
  hostId: string | null;
}
export interface HostEntity {
  id: string;
  name: string;
  kind: string;
  machine: string;
  pid: number;
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
}
export interface InstrumentLeaseEntity {
  name: string;
  hostId: string;
  since: Date;
  schema: string | null;
}
export interface PhaseEntity {
  id: number;
  runId: number;
  phase: string;
  iteration: number | null;
  params: string | null;
  outputs: string | null;
  status: string;
  startedAt: Date;
  endedAt: Date | null;
}
export interface RunLogEntity {
  id: number;
  runId: number;
  at: Date;
  level: string;
  message: string;
}
export interface FileEntity {
  id: number;
  kind: string;
  storedName: string;
  originalName: string;
  workflow: string | null;
  rows: number;
  columns: string;
  size: number;
  createdBy: number | null;
  createdAt: Date;
}

export interface ApprovalEntity {
  id: number;
  kind: string;
  status: string;
  summary: string;
  request: string;
  plan: string;
  userId: number | null;
  tokenId: number | null;
  tokenName: string;
  createdAt: Date;
  expiresAt: Date;
  decidedBy: number | null;
  decidedAt: Date | null;
  reason: string | null;
  outcome: string | null;
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
      disabledAt: { type: ts, name: 'disabled_at', nullable: true },
      deletedAt: { type: ts, name: 'deleted_at', nullable: true },
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
      // No foreign key to runs: SQLite cannot add one without rebuilding this (large) table, so
      // runs.delete deletes a run's steps itself. Direct calls have no run.
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
      log: { type: 'text', nullable: true },
    },
    indices: [
      // (run_id, id): a run's steps in order, paged by id (keyset) for streaming exports.
      { name: 'ix_steps_run_id_id', columns: ['runId', 'id'] },
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

  /** A foreign key from `column` to users.id that keeps the row when the user goes. */
  const byUser = (table: string, column: 'createdBy' | 'userId') => ({
    name: `fk_${table}_user`,
    target: 'User',
    columnNames: [column],
    referencedColumnNames: ['id'],
    onDelete: 'SET NULL' as const,
  });

  const Workflow = new EntitySchema<WorkflowEntity>({
    name: 'Workflow',
    tableName: 'workflows',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_workflows', generated: 'increment' },
      name: { type: 'text' },
      version: { type: 'integer' },
      definition: { type: 'text' },
      createdBy: { type: 'integer', name: 'created_by', nullable: true },
      createdAt: { type: ts, name: 'created_at' },
      deletedAt: { type: ts, name: 'deleted_at', nullable: true },
    },
    uniques: [{ name: 'uq_workflows_name_version', columns: ['name', 'version'] }],
    foreignKeys: [byUser('workflows', 'createdBy')],
  });

  const QueueTask = new EntitySchema<QueueTaskEntity>({
    name: 'QueueTask',
    tableName: 'queue_tasks',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_queue_tasks', generated: 'increment' },
      name: { type: 'text' },
      kind: { type: 'text' },
      payload: { type: 'text' },
      status: { type: 'text' },
      position: { type: 'integer' },
      runId: { type: 'integer', name: 'run_id', nullable: true },
      createdBy: { type: 'integer', name: 'created_by', nullable: true },
      createdAt: { type: ts, name: 'created_at' },
      startedAt: { type: ts, name: 'started_at', nullable: true },
      endedAt: { type: ts, name: 'ended_at', nullable: true },
      hostId: { type: 'text', name: 'host_id', nullable: true },
      holdsQueue: { type: dialect === 'postgres' ? 'boolean' : 'integer', name: 'holds_queue', default: dialect === 'postgres' ? false : 0 },
    },
    indices: [
      { name: 'ix_queue_tasks_status_position', columns: ['status', 'position'] },
      { name: 'ix_queue_tasks_run_id', columns: ['runId'] },
    ],
    foreignKeys: [
      byUser('queue_tasks', 'createdBy'),
      { name: 'fk_queue_tasks_run', target: 'Run', columnNames: ['runId'], referencedColumnNames: ['id'], onDelete: 'SET NULL' },
    ],
  });

  const Run = new EntitySchema<RunEntity>({
    name: 'Run',
    tableName: 'runs',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_runs', generated: 'increment' },
      taskId: { type: 'integer', name: 'task_id', nullable: true },
      name: { type: 'text' },
      workflowName: { type: 'text', name: 'workflow_name' },
      workflowVersion: { type: 'integer', name: 'workflow_version', nullable: true },
      workflow: { type: 'text' },
      parameters: { type: 'text' },
      status: { type: 'text' },
      error: { type: 'text', nullable: true },
      userId: { type: 'integer', name: 'user_id', nullable: true },
      startedAt: { type: ts, name: 'started_at' },
      endedAt: { type: ts, name: 'ended_at', nullable: true },
      skipped: { type: 'integer', default: 0 },
      hostId: { type: 'text', name: 'host_id', nullable: true },
    },
    indices: [
      // Covering index of the records list: the keyword filter and the newest-first order read only this
      // (small) index, never the rows with their workflow snapshots; the page's rows are then fetched by id.
      { name: 'ix_runs_search', columns: ['id', 'name', 'workflowName'] },
      { name: 'ix_runs_status', columns: ['status'] },
      { name: 'ix_runs_task_id', columns: ['taskId'] },
    ],
    foreignKeys: [
      { name: 'fk_runs_task', target: 'QueueTask', columnNames: ['taskId'], referencedColumnNames: ['id'], onDelete: 'SET NULL' },
      byUser('runs', 'userId'),
    ],
  });

  const Phase = new EntitySchema<PhaseEntity>({
    name: 'Phase',
    tableName: 'phases',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_phases', generated: 'increment' },
      runId: { type: 'integer', name: 'run_id' },
      phase: { type: 'text' },
      iteration: { type: 'integer', nullable: true },
      params: { type: 'text', nullable: true },
      outputs: { type: 'text', nullable: true },
      status: { type: 'text' },
      startedAt: { type: ts, name: 'started_at' },
      endedAt: { type: ts, name: 'ended_at', nullable: true },
    },
    indices: [{ name: 'ix_phases_run_id', columns: ['runId'] }],
    foreignKeys: [
      { name: 'fk_phases_run', target: 'Run', columnNames: ['runId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' },
    ],
  });

  const RunLog = new EntitySchema<RunLogEntity>({
    name: 'RunLog',
    tableName: 'run_logs',
    columns: {
      id: { type: bigId, primary: true, primaryKeyConstraintName: 'pk_run_logs', generated: 'increment' },
      runId: { type: 'integer', name: 'run_id' },
      at: { type: ts },
      level: { type: 'text' },
      message: { type: 'text' },
    },
    indices: [{ name: 'ix_run_logs_run_id', columns: ['runId'] }],
    foreignKeys: [
      { name: 'fk_run_logs_run', target: 'Run', columnNames: ['runId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' },
    ],
  });

  const File = new EntitySchema<FileEntity>({
    name: 'File',
    tableName: 'files',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_files', generated: 'increment' },
      kind: { type: 'text' },
      storedName: { type: 'text', name: 'stored_name' },
      originalName: { type: 'text', name: 'original_name' },
      workflow: { type: 'text', nullable: true },
      rows: { type: 'integer' },
      columns: { type: 'text' },
      size: { type: bigId },
      createdBy: { type: 'integer', name: 'created_by', nullable: true },
      createdAt: { type: ts, name: 'created_at' },
    },
    uniques: [{ name: 'uq_files_stored_name', columns: ['storedName'] }],
    indices: [{ name: 'ix_files_kind_workflow', columns: ['kind', 'workflow'] }],
    foreignKeys: [byUser('files', 'createdBy')],
  });

  /** A labdeck process that touches instruments, and its lease: alive while its heartbeat is recent. */
  const Host = new EntitySchema<HostEntity>({
    name: 'Host',
    tableName: 'hosts',
    columns: {
      id: { type: 'text', primary: true, primaryKeyConstraintName: 'pk_hosts' },
      name: { type: 'text' },
      kind: { type: 'text' },
      machine: { type: 'text' },
      pid: { type: 'integer' },
      startedAt: { type: ts, name: 'started_at' },
      heartbeatAt: { type: ts, name: 'heartbeat_at' },
      stoppedAt: { type: ts, name: 'stopped_at', nullable: true },
    },
  });

  /** The one host that drives an instrument (by name, lab-wide). */
  const InstrumentLease = new EntitySchema<InstrumentLeaseEntity>({
    name: 'InstrumentLease',
    tableName: 'instrument_leases',
    columns: {
      name: { type: 'text', primary: true, primaryKeyConstraintName: 'pk_instrument_leases' },
      hostId: { type: 'text', name: 'host_id' },
      since: { type: ts },
      schema: { type: 'text', nullable: true },
    },
    foreignKeys: [{ name: 'fk_instrument_leases_host', target: 'Host', columnNames: ['hostId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
  });

  /** What an agent asked for that waits for a person (the approval inbox, DESIGN.md §13). */
  const Approval = new EntitySchema<ApprovalEntity>({
    name: 'Approval',
    tableName: 'approvals',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_approvals', generated: 'increment' },
      kind: { type: 'text' },
      status: { type: 'text' },
      summary: { type: 'text' },
      request: { type: 'text' },
      plan: { type: 'text' },
      userId: { type: 'integer', name: 'user_id', nullable: true },
      tokenId: { type: 'integer', name: 'token_id', nullable: true },
      tokenName: { type: 'text', name: 'token_name' },
      createdAt: { type: ts, name: 'created_at' },
      expiresAt: { type: ts, name: 'expires_at' },
      decidedBy: { type: 'integer', name: 'decided_by', nullable: true },
      decidedAt: { type: ts, name: 'decided_at', nullable: true },
      reason: { type: 'text', nullable: true },
      outcome: { type: 'text', nullable: true },
    },
    indices: [{ name: 'ix_approvals_status', columns: ['status'] }],
    foreignKeys: [
      byUser('approvals', 'userId'),
      { name: 'fk_approvals_decider', target: 'User', columnNames: ['decidedBy'], referencedColumnNames: ['id'], onDelete: 'SET NULL' as const },
    ],
  });

  return [User, Session, ApiToken, MethodPrefs, Step, Audit, Setting, Workflow, QueueTask, Run, Phase, RunLog, File, Host, InstrumentLease, Approval, ...notifyEntitySchemas(dialect), ...resourceEntities(dialect), ...campaignEntities(dialect)] as EntitySchema[];
}
