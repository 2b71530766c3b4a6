/**
 * Every declared route (server/route.ts), for the route list, the API document and the clients. A function,
 * so the route modules (which import the list's users) are loaded before it is read.
 */
import type { Route } from '../route.js';
import { CAMPAIGN_ROUTES } from './campaigns.js';
import { FILE_ROUTES } from './files.js';
import { RECORD_ROUTES } from './records.js';
import { WORKFLOW_ROUTES } from './workflows.js';

export function declaredRoutes(): Route[] {
  return [...Object.values(CAMPAIGN_ROUTES), ...Object.values(RECORD_ROUTES), ...Object.values(WORKFLOW_ROUTES), ...Object.values(FILE_ROUTES)] as Route[];
}
