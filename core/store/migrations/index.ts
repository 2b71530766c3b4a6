/**
 * The migrations, in order, one set for SQLite and PostgreSQL (each writes its DDL once through ddl.ts).
 * Append new ones; never edit one that has shipped: a database records each by its name (the class's, ending
 * with its timestamp) and never runs it again.
 */
import { Init1732300000000 } from './1732300000000-init.js';
import { Runs1732400000000 } from './1732400000000-runs.js';
import { StepLog1732500000000 } from './1732500000000-step-log.js';
import { RunSkipped1732700000000 } from './1732700000000-run-skipped.js';
import { UserState1732800000000 } from './1732800000000-user-state.js';
import { WorkflowDeleted1732900000000 } from './1732900000000-workflow-deleted.js';
import { Hosts1733000000000 } from './1733000000000-hosts.js';
import { LeaseSchema1733100000000 } from './1733100000000-lease-schema.js';
import { Approvals1733200000000 } from './1733200000000-approvals.js';
import { Safety1733300000000 } from './1733300000000-safety.js';
import { Notifications1733400000000 } from './1733400000000-notifications.js';
import { Resources1733600000000 } from './1733600000000-resources.js';
import { CampaignPoints1733700000000 } from './1733700000000-campaign-points.js';

export const migrations = [
  Init1732300000000,
  Runs1732400000000,
  StepLog1732500000000,
  RunSkipped1732700000000,
  UserState1732800000000,
  WorkflowDeleted1732900000000,
  Hosts1733000000000,
  LeaseSchema1733100000000,
  Approvals1733200000000,
  Safety1733300000000,
  Notifications1733400000000,
  Resources1733600000000,
  CampaignPoints1733700000000,
];
