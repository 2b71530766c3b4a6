/**
 * The operations layer (DESIGN.md §15, docs/architecture.md): each operation once, behind every door. A door
 * (server/routes, server/ivoryos, server/mcp, cli, the relay between labdecks) builds a Caller and calls these;
 * it never reaches the store, the runner's internals or `deck.call` itself. In the manner of Node-RED's runtime
 * API (`runtime/lib/api/*`): one async function per operation, which does the check, the routing to the
 * labdeck that owns the task or instrument, the store, the audit line and the event.
 */
import { accountOperations } from './accounts.js';
import { agentOperations } from './agents.js';
import { attentionOperations } from './attention.js';
import { approvalOperations } from './approvals.js';
import type { Lab } from './lab.js';
import { campaignOperations } from './campaigns.js';
import { deviceOperations } from './devices.js';
import { fileOperations } from './files.js';
import { notificationOperations } from './notifications.js';
import { instrumentOperations } from './instruments.js';
import { recordOperations } from './records.js';
import { serveRelayed } from './relay.js';
import { resourceOperations } from './resources.js';
import { safetyOperations } from './safety.js';
import { runOperations } from './runs.js';
import { settingOperations } from './settings.js';
import { workflowOperations } from './workflows.js';

export * from './caller.js';
export { done, type Lab, type MaybeRequest } from './lab.js';
export type { AgentLink } from './agents.js';
export { CONTROL_ACTIONS, type Queued, type RunInput } from './runs.js';
export type { CallInput, Called, Started } from './instruments.js';
export type { LastRun } from './records.js';
export type { LabwareItem, LabwareView } from '../hosts/remote.js';
/** What the doors show of the runner and the queue (types and constants only: the runner itself stays behind the operations). */
export { DIRECTIONS, RUN_CONTROLS, type Direction, type RunControlName, type RunnerEvent, type RunnerStatus } from '../runner/index.js';
export type { QueueJson, QueueTaskJson, RunStartedJson } from '../runner/queue-schema.js';
/** The longest instrument name the deck takes. */
export { MAX_NAME } from '../deck/index.js';
export type { FileKind, MethodPrefs, Role, QueueTaskRow as QueuedTask, StepRow as CallRecord, PhaseRow, ApprovalRow, WorkflowRow, RunRow, OutboxRow, ResourceRow, MoveRow } from '../store/types.js';
export type { AttentionItem } from '../attention/index.js';
export type { BrokenStep, BrokenWorkflow } from '../resources/broken.js';

export function createOperations(lab: Lab) {
  const instruments = instrumentOperations(lab);
  const runs = runOperations(lab);
  const campaigns = campaignOperations(lab);
  // what other labdecks on the database ask of this one runs through the same operations
  serveRelayed(lab, { runs, instruments });
  return {
    instruments,
    runs,
    campaigns,
    approvals: approvalOperations(lab, { instruments, runs, campaigns }),
    records: recordOperations(lab),
    workflows: workflowOperations(lab),
    files: fileOperations(lab),
    devices: deviceOperations(lab),
    settings: settingOperations(lab),
    accounts: accountOperations(lab),
    safety: safetyOperations(lab),
    notifications: notificationOperations(lab),
    resources: resourceOperations(lab),
    attention: attentionOperations(lab),
    agents: agentOperations(lab),
  };
}

export type Operations = ReturnType<typeof createOperations>;
