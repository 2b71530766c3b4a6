// Lint: typescript-eslint's recommended rules on all TypeScript sources.
import tseslint from 'typescript-eslint';

/**
 * The doors that reach the lab only through core/operations (DESIGN.md §15, docs/architecture.md): they may
 * not import the store, the runner's or the deck's internals, nor reach `runtime.store`, `runtime.runner`,
 * `runtime.deck`, `runtime.audit` and the like, nor call `deck.call` or write an audit line themselves.
 * A door is added here once it is moved onto the operations (docs/architecture.md lists those still to move).
 */
const DOORS_ON_OPERATIONS = [
  'server/agents.ts',
  'server/routes/auth.tsx',
  'server/routes/devices.tsx',
  'server/routes/executions.tsx',
  'server/routes/files.tsx',
  'server/routes/home.tsx',
  'server/routes/instruments.tsx',
  'server/routes/approvals.tsx',
  'server/routes/campaigns.tsx',
  'server/routes/campaign-points.tsx',
  'server/routes/records.tsx',
  'server/routes/users.tsx',
  'server/routes/workflows.tsx',
  'server/routes/api-docs.tsx',
  'server/routes/safety.tsx',
  'server/routes/notifications.tsx',
  'server/routes/resources.tsx',
  'server/routes/inputs.tsx',
  'server/routes/attention.tsx',
  'server/ivoryos/index.ts',
  'server/ivoryos/shapes.ts',
  'server/mcp/index.ts',
  'server/context.ts',
  'server/security.ts',
  'cli/user.ts',
  'cli/agent.ts',
];
/**
 * Doors on the operations for all they do through the runtime, that still import a module of the list for a
 * step before the runtime exists (`lab run` checks the data folder's queue before any runner starts).
 */
const DOORS_ON_OPERATIONS_AT_RUN_TIME = ['cli/run.ts'];
/*
 * Not a door: cli/serve.ts makes the runtime (createRuntime) and the server on it, and owns them for their
 * lifetime: it gives the notifications the server's address, logs the plugins' and the deck's events as they
 * come (their emitters), the safety file's state at start, and closes the runtime. Assembling the lab is not
 * reaching into it; what it serves goes through the doors above. server/app.tsx is the same kind (it puts the
 * session store on the database and reserves the instrument routes' names on the deck).
 */
/** The runtime's parts a door may not touch: everything but `ops` (and `dataDir`, `consoleTimeoutMs`, plain values). */
const INNER = 'store|runner|deck|audit|approvals|campaigns|files|python|safety|notifications|resources|preflight|attention|accounts|agents|branding|plugins|deckFile|deckWatch';
const OPERATIONS_ONLY = 'doors reach the lab through core/operations (runtime.ops): see docs/architecture.md';

/** What a door may not reach through the runtime object, call or write. */
const NO_REACHING_IN = [
  { selector: `MemberExpression[object.name='runtime'][property.name=/^(${INNER})$/]`, message: `runtime.<part>: ${OPERATIONS_ONLY}.` },
  { selector: `VariableDeclarator[init.name='runtime'] > ObjectPattern > Property[key.name=/^(${INNER})$/]`, message: `const { <part> } = runtime: ${OPERATIONS_ONLY}.` },
  {
    selector: `CallExpression[callee.property.name='call'][callee.object.name='deck']`,
    message: `deck.call: a direct call is runtime.ops.instruments.call (it routes to the labdeck that drives the instrument).`,
  },
  {
    selector: `CallExpression[callee.property.name='call'][callee.object.property.name='deck']`,
    message: `deck.call: a direct call is runtime.ops.instruments.call (it routes to the labdeck that drives the instrument).`,
  },
  { selector: `CallExpression[callee.property.name='audit']`, message: `An audit line is written by the operation it records: ${OPERATIONS_ONLY}.` },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'lab-data/', 'lab-plugins/', 'test/fixtures/**/broken*'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: DOORS_ON_OPERATIONS,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/core/store/*', '**/core/store/**'], message: `The store is behind the operations: ${OPERATIONS_ONLY}; its row types are re-exported there.` },
            {
              group: ['**/core/runner/*', '!**/core/runner/controls.js'],
              message: `The runner's internals are behind the operations: ${OPERATIONS_ONLY}; its status and event types are re-exported there (core/runner/controls.js, pure, stays open).`,
            },
            {
              group: ['**/core/deck/index.js', '**/core/deck/mutex.js', '**/core/deck/watch.js'],
              message: `The deck is behind the operations: ${OPERATIONS_ONLY} (core/deck/form.js, pure, stays open).`,
            },
            { group: ['**/core/console.js'], message: `The console is an operation: ${OPERATIONS_ONLY}.` },
          ],
        },
      ],
      'no-restricted-syntax': ['error', ...NO_REACHING_IN],
    },
  },
  { files: DOORS_ON_OPERATIONS_AT_RUN_TIME, rules: { 'no-restricted-syntax': ['error', ...NO_REACHING_IN] } },
);
