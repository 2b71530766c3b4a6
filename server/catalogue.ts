/**
 * Every route labdeck serves, in one list: the home page shows it, and the API document is checked against
 * it. Paths are relative to the mount (`/app` or `/`).
 */
export interface RouteInfo {
  method: string;
  path: string;
  summary: string;
  section: string;
  admin?: boolean;
  public?: boolean;
}

export const ROUTES: RouteInfo[] = [
  { section: 'Home', method: 'GET', path: '/', summary: 'This page: every route of the app' },
  { section: 'Home', method: 'GET', path: '/help', summary: 'How labdeck works', public: true },
  { section: 'Home', method: 'GET', path: '/healthz', summary: 'Health check (200 when ready)', public: true },
  { section: 'Home', method: 'POST', path: '/customize-logo', summary: 'Set the lab logo and light/dark mode', admin: true },
  { section: 'Home', method: 'GET', path: '/logo', summary: 'The lab logo (404 when none is set)', public: true },
  { section: 'Accounts', method: 'GET', path: '/auth/login', summary: 'Login form', public: true },
  { section: 'Accounts', method: 'POST', path: '/auth/login', summary: 'Log in (302; 401 wrong password; 429 throttled)', public: true },
  { section: 'Accounts', method: 'GET', path: '/auth/signup', summary: 'Sign-up form', public: true },
  { section: 'Accounts', method: 'POST', path: '/auth/signup', summary: 'Create an account (302; 409 taken)', public: true },
  { section: 'Accounts', method: 'GET', path: '/auth/change-password', summary: 'Password change form' },
  { section: 'Accounts', method: 'POST', path: '/auth/change-password', summary: 'Change the password (302)' },
  { section: 'Accounts', method: 'POST', path: '/auth/logout', summary: 'Log out (302 to the login form; GET works too)', public: true },
  { section: 'Accounts', method: 'GET', path: '/auth/logout', summary: 'Log out, for a plain link (same as POST)', public: true },
  { section: 'Accounts', method: 'GET', path: '/account', summary: 'Your account: API tokens; lab settings for admins' },
  { section: 'Accounts', method: 'POST', path: '/account/tokens', summary: 'Make an API token (shown once)' },
  { section: 'Accounts', method: 'POST', path: '/account/tokens/{id}/delete', summary: 'Revoke an API token' },
  { section: 'Accounts', method: 'POST', path: '/account/signup', summary: 'Open or close sign-up', admin: true },
  { section: 'Direct control', method: 'GET', path: '/instruments/', summary: 'All instruments' },
  { section: 'Direct control', method: 'GET', path: '/instruments/{instrument}', summary: 'An instrument: its methods and their schemas' },
  { section: 'Direct control', method: 'POST', path: '/instruments/{instrument}', summary: 'Call a method: { method, args } (200 { task_id, output })' },
  { section: 'Direct control', method: 'POST', path: '/instruments/', summary: 'Call a method, instrument named in the body' },
  { section: 'Direct control', method: 'GET', path: '/instruments/{instrument}/calls', summary: 'The latest recorded calls of an instrument' },
  { section: 'Direct control', method: 'POST', path: '/instruments/{instrument}/actions/order', summary: 'Save your method order (204)' },
  { section: 'Direct control', method: 'PATCH', path: '/instruments/{instrument}/actions/{function}', summary: 'Hide or show a method for you' },
  { section: 'Direct control', method: 'GET', path: '/instruments/task/{task_id}', summary: 'One recorded instrument call' },
  { section: 'Direct control', method: 'POST', path: '/instruments/console/execute', summary: 'Run a JavaScript/TypeScript snippet against the deck', admin: true },
  { section: 'Direct control', method: 'GET', path: '/instruments/proxy', summary: 'Download a client for the live deck (?lang=python|typescript)' },
  { section: 'Temporary devices', method: 'GET', path: '/instruments/new/', summary: 'Connect a new device: the drivers you can use' },
  { section: 'Temporary devices', method: 'GET', path: '/instruments/new/{instrument}', summary: 'The form to connect a device of one driver' },
  { section: 'Temporary devices', method: 'POST', path: '/instruments/new/{instrument}', summary: 'Connect a device: device_name + options (302)', admin: true },
  { section: 'Temporary devices', method: 'POST', path: '/instruments/new/module', summary: 'Import a driver module from a server path (302)', admin: true },
  { section: 'Temporary devices', method: 'POST', path: '/instruments/new/deck-python', summary: 'Import a deck module from a server path (302)', admin: true },
  { section: 'API', method: 'GET', path: '/api', summary: 'This API, readable: every route, its body and statuses', public: true },
  { section: 'API', method: 'GET', path: '/openapi.json', summary: 'The OpenAPI 3.1 document (with your deck\'s call bodies when logged in)', public: true },
  { section: 'Assets', method: 'GET', path: '/static/{file}', summary: "labdeck's own stylesheet and icon", public: true },
  { section: 'Assets', method: 'GET', path: '/static/app.js', summary: 'The browser script (bundled by esbuild)', public: true },
  { section: 'Assets', method: 'GET', path: '/static/vendor/{file}', summary: 'Bootstrap, htmx, SortableJS and uPlot, served from our own origin', public: true },
];
