/**
 * The app's catalogue, as createApp makes it: from the route groups server/app.tsx mounts (server/catalogue.ts).
 * For tests that read the route list without an app (the API document's builder, the client generators).
 */
import { ROUTE_GROUPS } from '../../server/app.js';
import { catalogueOf } from '../../server/catalogue.js';

export const CATALOGUE = catalogueOf(ROUTE_GROUPS);
/** Every declared route, in the catalogue's order. */
export const ROUTES = CATALOGUE.routes;
