/**
 * Every table of the store as it is now, described once for both dialects (table.ts says how; columns.ts
 * what the words are on each). The migrations are how the tables got here; test/unit/store.test.ts checks
 * that these and what the migrations made agree (TypeORM's diff of entities.ts), test/unit/store-schema.test.ts
 * that the migrations make the committed schema. Adding a table or a column: a migration
 * (migrations/, through ddl.ts), its description here, its row type in types.ts (checked at the end).
 */
import type { ApprovalRow, AuditRow, FileRow, HostRow, LogRow, PhaseRow, QueueTaskRow, RunRow, SafetyDocRow, StepRow, TokenRow, UserRow, WorkflowRow } from './types.js';
import type { CampaignRow, PointRow } from './campaign-types.js';
import type { OutboxRow } from './outbox-types.js';
import type { DeckVersionRow, MoveRow, ResourceRow } from './resource-types.js';
import { table, type FieldsOf, type TableShape } from './table.js';

// ---- accounts ----

export const users = table(
  'users',
  { id: 'id', username: 'text', passwordHash: 'text', role: 'text', createdAt: 'ts', disabledAt: 'ts?', deletedAt: 'ts?' },
  { unique: { uq_users_username: ['username'] } },
);

export const sessions = table('sessions', { sid: 'text', data: 'text', expiresAt: 'ts' }, { primary: 'sid', indexes: { ix_sessions_expires_at: ['expiresAt'] } });

export const apiTokens = table(
  'api_tokens',
  { id: 'id', userId: 'int', name: 'text', tokenHash: 'text', prefix: 'text', createdAt: 'ts', lastUsedAt: 'ts?' },
  {
    unique: { uq_api_tokens_token_hash: ['tokenHash'] },
    indexes: { ix_api_tokens_user_id: ['userId'] },
    foreignKeys: { fk_api_tokens_user: ['userId', 'users', 'CASCADE'] },
  },
);

export const methodPrefs = table(
  'method_prefs',
  { id: 'id', userId: 'int', instrument: 'text', methodOrder: 'text', hidden: 'text' },
  { unique: { uq_method_prefs_user_instrument: ['userId', 'instrument'] }, foreignKeys: { fk_method_prefs_user: ['userId', 'users', 'CASCADE'] } },
);

// ---- calls, the audit log, settings ----

/**
 * One instrument call. No foreign key to runs: SQLite cannot add one without rebuilding this (large) table,
 * so runs.delete deletes a run's steps itself. Direct calls have no run.
 */
export const steps = table(
  'steps',
  {
    id: 'bigid',
    runId: 'int?',
    phase: 'text?',
    iteration: 'int?',
    stepIndex: 'int?',
    instrument: 'text',
    method: 'text',
    args: 'text?',
    output: 'text?',
    status: 'text',
    error: 'text?',
    userId: 'int?',
    startedAt: 'ts',
    endedAt: 'ts?',
    log: 'text?',
  },
  {
    // (run_id, id): a run's steps in order, paged by id (keyset) for streaming exports.
    indexes: { ix_steps_run_id_id: ['runId', 'id'], ix_steps_instrument_id: ['instrument', 'id'] },
    foreignKeys: { fk_steps_user: ['userId', 'users', 'SET NULL'] },
  },
);

export const auditLog = table('audit_log', { id: 'id', userId: 'int?', action: 'text', detail: 'text?', at: 'ts' }, { foreignKeys: { fk_audit_log_user: ['userId', 'users', 'SET NULL'] } });

export const settings = table('settings', { key: 'text', value: 'text' }, { primary: 'key' });

// ---- workflows, the queue, runs, files ----

export const workflows = table(
  'workflows',
  { id: 'id', name: 'text', version: 'int', definition: 'text', createdBy: 'int?', createdAt: 'ts', deletedAt: 'ts?' },
  { unique: { uq_workflows_name_version: ['name', 'version'] }, foreignKeys: { fk_workflows_user: ['createdBy', 'users', 'SET NULL'] } },
);

export const queueTasks = table(
  'queue_tasks',
  {
    id: 'id',
    name: 'text',
    kind: 'text',
    payload: 'text',
    status: 'text',
    position: 'int',
    runId: 'int?',
    createdBy: 'int?',
    createdAt: 'ts',
    startedAt: 'ts?',
    endedAt: 'ts?',
    hostId: 'text?',
    holdsQueue: { type: 'bool', default: false },
  },
  {
    indexes: { ix_queue_tasks_status_position: ['status', 'position'], ix_queue_tasks_run_id: ['runId'] },
    foreignKeys: { fk_queue_tasks_user: ['createdBy', 'users', 'SET NULL'], fk_queue_tasks_run: ['runId', 'runs', 'SET NULL'] },
  },
);

export const runs = table(
  'runs',
  {
    id: 'id',
    taskId: 'int?',
    name: 'text',
    workflowName: 'text',
    workflowVersion: 'int?',
    workflow: 'text',
    parameters: 'text',
    status: 'text',
    error: 'text?',
    userId: 'int?',
    startedAt: 'ts',
    endedAt: 'ts?',
    skipped: { type: 'int', default: 0 },
    hostId: 'text?',
  },
  {
    // Covering index of the records list: the keyword filter and the newest-first order read only this
    // (small) index, never the rows with their workflow snapshots; the page's rows are then fetched by id.
    indexes: { ix_runs_search: ['id', 'name', 'workflowName'], ix_runs_status: ['status'], ix_runs_task_id: ['taskId'] },
    foreignKeys: { fk_runs_task: ['taskId', 'queue_tasks', 'SET NULL'], fk_runs_user: ['userId', 'users', 'SET NULL'] },
  },
);

export const phases = table(
  'phases',
  { id: 'id', runId: 'int', phase: 'text', iteration: 'int?', params: 'text?', outputs: 'text?', status: 'text', startedAt: 'ts', endedAt: 'ts?' },
  { indexes: { ix_phases_run_id: ['runId'] }, foreignKeys: { fk_phases_run: ['runId', 'runs', 'CASCADE'] } },
);

export const runLogs = table(
  'run_logs',
  { id: 'bigid', runId: 'int', at: 'ts', level: 'text', message: 'text' },
  { indexes: { ix_run_logs_run_id: ['runId'] }, foreignKeys: { fk_run_logs_run: ['runId', 'runs', 'CASCADE'] } },
);

export const files = table(
  'files',
  {
    id: 'id',
    kind: 'text',
    storedName: 'text',
    originalName: 'text',
    workflow: 'text?',
    rows: 'int',
    columns: 'text',
    size: 'bigint',
    createdBy: 'int?',
    createdAt: 'ts',
  },
  {
    unique: { uq_files_stored_name: ['storedName'] },
    indexes: { ix_files_kind_workflow: ['kind', 'workflow'] },
    foreignKeys: { fk_files_user: ['createdBy', 'users', 'SET NULL'] },
  },
);

// ---- hosts, approvals, safety ----

/** A labdeck process that touches instruments, and its lease: alive while its heartbeat is recent. */
export const hosts = table('hosts', { id: 'text', name: 'text', kind: 'text', machine: 'text', pid: 'int', startedAt: 'ts', heartbeatAt: 'ts', stoppedAt: 'ts?' }, { primary: 'id' });

/** The one host that drives an instrument (by name, lab-wide). */
export const instrumentLeases = table(
  'instrument_leases',
  { name: 'text', hostId: 'text', since: 'ts', schema: 'text?' },
  { primary: 'name', foreignKeys: { fk_instrument_leases_host: ['hostId', 'hosts', 'CASCADE'] } },
);

/** What an agent asked for that waits for a person (the approval inbox, DESIGN.md §13). */
export const approvals = table(
  'approvals',
  {
    id: 'id',
    kind: 'text',
    status: 'text',
    summary: 'text',
    request: 'text',
    plan: 'text',
    userId: 'int?',
    tokenId: 'int?',
    tokenName: 'text',
    createdAt: 'ts',
    expiresAt: 'ts',
    decidedBy: 'int?',
    decidedAt: 'ts?',
    reason: 'text?',
    outcome: 'text?',
  },
  {
    indexes: { ix_approvals_status: ['status'] },
    foreignKeys: { fk_approvals_user: ['userId', 'users', 'SET NULL'], fk_approvals_decider: ['decidedBy', 'users', 'SET NULL'] },
  },
);

/** The safety guard's documents: the lab-wide safety file and the tracked states (core/safety). */
export const safetyDocs = table('safety_docs', { name: 'text', body: 'text', version: 'int', updatedAt: 'ts', updatedBy: 'int?' }, { primary: 'name' });

// ---- the notification outbox (core/notify) ----

export const notifyOutbox = table(
  'notify_outbox',
  {
    id: 'id',
    alertId: 'text',
    event: 'text',
    state: 'text',
    key: 'text',
    runId: 'int?',
    taskId: 'int?',
    userId: 'int?',
    payload: 'text',
    createdAt: 'ts',
    fannedAt: 'ts?',
  },
  { indexes: { ix_notify_outbox_key: ['key'], ix_notify_outbox_fanned: ['fannedAt'], ix_notify_outbox_alert: ['alertId'] } },
);

export const notifyDeliveries = table(
  'notify_deliveries',
  {
    id: 'id',
    outboxId: 'int',
    channel: 'text',
    status: 'text',
    attempts: 'int',
    nextAt: 'ts',
    claimedBy: 'text?',
    claimedUntil: 'ts?',
    deliveredAt: 'ts?',
    lastError: 'text?',
  },
  {
    unique: { uq_notify_deliveries: ['outboxId', 'channel'] },
    indexes: { ix_notify_deliveries_due: ['status', 'nextAt'] },
    foreignKeys: { fk_notify_deliveries_outbox: ['outboxId', 'notify_outbox', 'CASCADE'] },
  },
);

// ---- resources, their ledger, deck versions (issue 32) ----

export const resources = table(
  'resources',
  {
    id: 'id',
    name: 'text',
    kind: 'text',
    quantity: 'real',
    unit: 'text',
    rows: 'int?',
    columns: 'int?',
    location: 'text?',
    identity: 'text?',
    inDoubt: 'int',
    createdAt: 'ts',
    updatedAt: 'ts',
  },
  { unique: { uq_resources_name: ['name'] } },
);

export const resourceMoves = table(
  'resource_moves',
  {
    id: 'id',
    resource: 'text',
    kind: 'text',
    status: 'text',
    delta: 'real?',
    fromLocation: 'text?',
    toLocation: 'text?',
    stepId: 'bigint?',
    runId: 'int?',
    userId: 'int?',
    note: 'text?',
    at: 'ts',
  },
  { indexes: { ix_resource_moves_resource: ['resource', 'id'], ix_resource_moves_step: ['stepId'] } },
);

export const deckVersions = table('deck_versions', { id: 'id', host: 'text', reason: 'text', schemas: 'text', diff: 'text', at: 'ts' });

export const runDeckVersions = table('run_deck_versions', { runId: 'int', version: 'int' }, { primary: 'runId' });

// ---- campaigns people carry out, and their points (issue 31) ----

export const campaigns = table(
  'campaigns',
  { id: 'id', name: 'text', execution: 'text', taskId: 'int?', payload: 'text', createdBy: 'int?', createdAt: 'ts' },
  { indexes: { ix_campaigns_task: ['taskId'] } },
);

export const campaignPoints = table(
  'campaign_points',
  {
    id: 'id',
    campaignId: 'int',
    n: 'int',
    parameters: 'text',
    state: 'text',
    results: 'text?',
    reason: 'text?',
    suggestedBy: 'text',
    suggestedUser: 'int?',
    measuredBy: 'text?',
    measuredUser: 'int?',
    createdAt: 'ts',
    measuredAt: 'ts?',
  },
  { unique: { uq_campaign_points_n: ['campaignId', 'n'] } },
);

/** Every table, in the order the entities are listed. */
export const tables: TableShape[] = [
  users,
  sessions,
  apiTokens,
  methodPrefs,
  steps,
  auditLog,
  settings,
  workflows,
  queueTasks,
  runs,
  phases,
  runLogs,
  files,
  hosts,
  instrumentLeases,
  approvals,
  safetyDocs,
  notifyOutbox,
  notifyDeliveries,
  resources,
  resourceMoves,
  deckVersions,
  runDeckVersions,
  campaigns,
  campaignPoints,
];

// ---- the row types of types.ts have exactly their table's fields (a compile error here says which differs) ----

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const rowTypesMatch: Record<string, true> = {
  users: true satisfies Same<keyof UserRow, FieldsOf<typeof users>>,
  apiTokens: true satisfies Same<keyof TokenRow, Exclude<FieldsOf<typeof apiTokens>, 'tokenHash'>>, // the hash is never read back
  steps: true satisfies Same<keyof StepRow, FieldsOf<typeof steps>>,
  auditLog: true satisfies Same<keyof AuditRow, FieldsOf<typeof auditLog>>,
  workflows: true satisfies Same<keyof WorkflowRow, FieldsOf<typeof workflows>>,
  queueTasks: true satisfies Same<keyof QueueTaskRow, FieldsOf<typeof queueTasks>>,
  runs: true satisfies Same<keyof RunRow, FieldsOf<typeof runs>>,
  phases: true satisfies Same<keyof PhaseRow, FieldsOf<typeof phases>>,
  runLogs: true satisfies Same<keyof LogRow, FieldsOf<typeof runLogs>>,
  files: true satisfies Same<keyof FileRow, FieldsOf<typeof files>>,
  hosts: true satisfies Same<keyof HostRow, FieldsOf<typeof hosts>>,
  approvals: true satisfies Same<keyof ApprovalRow, FieldsOf<typeof approvals>>,
  safetyDocs: true satisfies Same<keyof SafetyDocRow, FieldsOf<typeof safetyDocs>>,
  notifyOutbox: true satisfies Same<keyof OutboxRow, Exclude<FieldsOf<typeof notifyOutbox>, 'fannedAt'>>, // fanned_at: the outbox's own bookkeeping
  resources: true satisfies Same<keyof ResourceRow, FieldsOf<typeof resources>>,
  resourceMoves: true satisfies Same<keyof MoveRow, FieldsOf<typeof resourceMoves>>,
  deckVersions: true satisfies Same<keyof DeckVersionRow, FieldsOf<typeof deckVersions>>,
  campaigns: true satisfies Same<keyof CampaignRow, FieldsOf<typeof campaigns>>,
  campaignPoints: true satisfies Same<keyof PointRow, FieldsOf<typeof campaignPoints>>,
};
void rowTypesMatch;
