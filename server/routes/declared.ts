/**
 * Every declared route (server/route.ts), for the route list, the API document and the clients. A function,
 * so the route modules (which import the list's users) are loaded before it is read.
 */
import type { Route } from '../route.js';
import { MCP_ROUTES } from '../mcp/index.js';
import { NOTIFICATION_ROUTES } from './notifications.js';
import { API_DOC_ROUTES } from './api-docs.js';
import { APPROVAL_ROUTES } from './approvals.js';
import { AUTH_ROUTES } from './auth.js';
import { CAMPAIGN_ROUTES } from './campaigns.js';
import { CAMPAIGN_POINT_ROUTES } from './campaign-points.js';
import { DEVICE_ROUTES } from './devices.js';
import { EXECUTION_ROUTES } from './executions.js';
import { FILE_ROUTES } from './files.js';
import { ASSET_ROUTES, HOME_ROUTES } from './home.js';
import { INSTRUMENT_ROUTES } from './instruments.js';
import { INPUT_ROUTES } from './inputs.js';
import { ATTENTION_ROUTES } from './attention.js';
import { RECORD_ROUTES } from './records.js';
import { RESOURCE_ROUTES } from './resources.js';
import { SAFETY_ROUTES } from './safety.js';
import { USER_ROUTES } from './users.js';
import { WORKFLOW_ROUTES } from './workflows.js';

export function declaredRoutes(): Route[] {
  return [...Object.values(HOME_ROUTES), ...Object.values(AUTH_ROUTES), ...Object.values(USER_ROUTES), ...Object.values(API_DOC_ROUTES), ...Object.values(EXECUTION_ROUTES), ...Object.values(CAMPAIGN_ROUTES), ...Object.values(CAMPAIGN_POINT_ROUTES), ...Object.values(RECORD_ROUTES), ...Object.values(WORKFLOW_ROUTES), ...Object.values(FILE_ROUTES), ...Object.values(INSTRUMENT_ROUTES), ...Object.values(DEVICE_ROUTES), ...Object.values(APPROVAL_ROUTES), ...Object.values(NOTIFICATION_ROUTES), ...Object.values(SAFETY_ROUTES), ...Object.values(MCP_ROUTES), ...Object.values(RESOURCE_ROUTES), ...Object.values(INPUT_ROUTES), ...Object.values(ATTENTION_ROUTES), ...Object.values(ASSET_ROUTES)] as Route[];
}
