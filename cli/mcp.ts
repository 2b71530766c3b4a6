/**
 * `lab mcp --server URL --token TOKEN`: labdeck's MCP server for a desktop assistant that starts its servers
 * as programs speaking MCP over stdio (Claude Desktop, editors). It runs on the assistant's computer and
 * passes each message between stdio and a running labdeck's `/app/mcp` (Streamable HTTP), so the tools, the
 * approval inbox and the audit log are that labdeck's. Standard output carries the protocol only; what it
 * has to say goes to standard error.
 */
import type { Readable, Writable } from 'node:stream';
import type { Command } from '@commander-js/extra-typings';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TOKEN_PREFIX } from '../core/accounts/index.js';
import { EXIT, UsageError } from './io.js';

export interface McpBridgeOptions {
  server: string;
  token: string;
}

/** The MCP endpoint of a labdeck URL: `http://h:8000/app` → `http://h:8000/app/mcp`. */
export function mcpUrl(server: string): URL {
  let u: URL;
  try {
    u = new URL(server);
  } catch {
    throw new UsageError(`--server must be the lab's URL, e.g. http://lab-pc:8000/app (got ${JSON.stringify(server)})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--server must be an http:// or https:// URL (got ${u.protocol})`);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/mcp`;
  return u;
}

/**
 * Pass messages between stdio (`input`/`output`) and the labdeck at `opts.server` until the input ends. A
 * request the labdeck cannot be reached for is answered with a JSON-RPC error saying so, so the assistant
 * shows the reason instead of waiting.
 */
export async function startMcpBridge(
  opts: McpBridgeOptions,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
  log: (line: string) => void = (l) => console.error(l),
) {
  const url = mcpUrl(opts.server);
  if (!opts.token.startsWith(MCP_TOKEN_PREFIX)) throw new UsageError(`--token must be an MCP token (${MCP_TOKEN_PREFIX}…): make one on the account page with scope "mcp"`);
  // the SDK is loaded here, not with the command line: every other `lab` command starts without it
  const [{ StreamableHTTPClientTransport }, { StdioServerTransport }, { isJSONRPCRequest }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const remote = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${opts.token}` } } });
  const local = new StdioServerTransport(io.input, io.output);
  const closed = new Promise<void>((resolve) => (local.onclose = resolve));
  local.onmessage = (m: JSONRPCMessage) => {
    remote.send(m).catch((e: unknown) => {
      const message = `labdeck at ${url.href} did not answer: ${(e as Error).message}`;
      log(`lab mcp: ${message}`);
      if (isJSONRPCRequest(m)) void local.send({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message } });
    });
  };
  remote.onmessage = (m) => void local.send(m);
  remote.onerror = (e) => log(`lab mcp: ${e.message}`);
  await remote.start();
  await local.start();
  log(`lab mcp: serving ${url.href} on stdio`);
  return {
    closed,
    async stop() {
      await local.close();
      await remote.close();
    },
  };
}

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description("labdeck's MCP server on stdio for a desktop AI assistant, talking to a running labdeck")
    .requiredOption('--server <url>', 'the running labdeck, e.g. http://127.0.0.1:8000/app')
    .requiredOption('--token <token>', `an MCP token (${MCP_TOKEN_PREFIX}…), made on the account page with scope "mcp"`)
    .action(async (o) => {
      try {
        const bridge = await startMcpBridge(o);
        await bridge.closed;
        process.exit(EXIT.ok);
      } catch (e) {
        console.error(`lab mcp: ${(e as Error).message}`);
        process.exit(e instanceof UsageError ? EXIT.badInput : EXIT.failed);
      }
    });
}
