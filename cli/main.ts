/** The `lab` command line. Exit codes: 0 done, 1 failed, 2 bad input. */
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { isLabError } from '../core/errors.js';
import { registerAgentCommand } from './agent.js';
import { registerInitCommands } from './init.js';
import { registerMcpCommand } from './mcp.js';
import { EXIT } from './io.js';
import { registerPluginsCommands } from './plugins.js';
import { registerRunCommand } from './run.js';
import { registerUserCommands } from './user.js';

const program = new Command()
  .name('lab')
  .description('labdeck: your instrument drivers as a web app and a command line')
  .version('0.1.0')
  .showHelpAfterError()
  // Usage mistakes (unknown option, missing argument, no subcommand) exit 2; --help and --version exit 0.
  // Set before the commands are added: subcommands inherit it.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.badInput))
  .addHelpText('after', '\nExit codes: 0 done, 1 failed, 2 bad input. `lab help COMMAND` for details.');

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number 0-65535');
  return n;
};

const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a number of seconds above 0');
  return n;
};

/** --parallel: how many tasks at once, a whole number from 1 (anything else is a usage mistake: exit 2). */
const tasksAtOnce = (v: string) => {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('how many tasks may run at once: a whole number, 1 or more');
  return n;
};

/** A count of something, a whole number from 1. */
const countOf = (what: string) => (v: string) => {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`how many ${what}: a whole number, 1 or more`);
  return n;
};

const common = (c: Command) =>
  c
    .option('--deck <file>', 'deck module (default: the demo deck)')
    .option('--plugins <dir>', 'plugin folder (lab serve creates it if missing, and watches it for changes)', 'lab-plugins')
    .option('--data-dir <dir>', 'data folder: database, secret, uploads', 'lab-data')
    .option('--db <url>', 'database URL: sqlite:PATH or postgres://... (default: SQLite in the data folder)')
    .option('--python <path>', "Python interpreter for Python decks and drivers, e.g. your lab's venv (default: LABDECK_PYTHON, then python3)");

common(program.command('serve').description('serve the web app'))
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--port <port>', 'port to listen on', port, 8000)
  .option('--no-watch', 'do not watch plugin folders or the deck')
  .option('--console-timeout <seconds>', 'time limit of one console run', seconds, 10)
  .option('--parallel <n>', "how many tasks on disjoint instruments run at once (each leases its workflow's instruments)", tasksAtOnce, 1)
  .option('--max-connections <n>', 'connections held at once, in all (more are closed at once)', countOf('connections'), 1000)
  .option('--max-connections-per-address <n>', 'connections held at once from one client address (raise it behind a reverse proxy)', countOf('connections'), 100)
  .option('--headers-timeout <seconds>', "time a client has to send a request's headers (a socket that sends nothing is closed after it)", seconds, 10)
  .option('--request-timeout <seconds>', 'time a client has to send a whole request, its body included (raise it for big uploads on slow links)', seconds, 30)
  .option('--safety <file>', "the lab's safety file (ivoryos-safety/1; default <data-dir>/safety.json when present; on PostgreSQL it seeds the lab-wide copy in the database)")
  .option('--agent-call-timeout <seconds>', 'how long a call relayed to a lab agent may go unanswered before it fails in doubt (503)', seconds, 600)
  .option(
    '--allowed-hosts <names>',
    "comma-separated host names the lab uses to reach labdeck (IP addresses, localhost and this machine's name always work); name:port or :port also allows a port other than labdeck's (a proxy)",
    (v: string) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
  )
  .action(async (o) => {
    const { serve } = await import('./serve.js');
    const s = await serve({
      host: o.host,
      port: o.port,
      deck: o.deck,
      pluginDirs: [o.plugins],
      dataDir: o.dataDir,
      db: o.db,
      watch: o.watch,
      python: o.python,
      consoleTimeoutMs: o.consoleTimeout * 1000,
      allowedHosts: o.allowedHosts,
      parallel: o.parallel,
      limits: {
        maxConnections: o.maxConnections,
        maxConnectionsPerAddress: o.maxConnectionsPerAddress,
        headersTimeoutMs: Math.round(o.headersTimeout * 1000),
        requestTimeoutMs: Math.round(o.requestTimeout * 1000),
      },
      agentCallTimeoutMs: o.agentCallTimeout * 1000,
      safety: o.safety,
    });
    const stop = () => {
      console.log('labdeck stopping');
      s.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

registerRunCommand(program, common);
registerAgentCommand(program);
registerMcpCommand(program);
registerUserCommands(program);
registerPluginsCommands(program);
registerInitCommands(program);

program.parseAsync().catch((e: unknown) => {
  console.error(`lab: ${(e as Error).message}`);
  process.exit(isLabError(e) && e.code === 'invalid_input' ? 2 : 1);
});
