// Real MCP servers over streamable HTTP on 127.0.0.1 for the MCP tests: the npm reference
// server `server-everything` (pinned in tests/mcp-servers, started as tests/support's
// EverythingOverHttp starts it), and a small server written with the official SDK's server
// whose tool list changes on request, which server-everything cannot do (see
// `startListChangingServer`).

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { REPO } from './processes.mjs';

const SERVERS = join(REPO, 'tests', 'mcp-servers');
const EVERYTHING = join(SERVERS, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** Starts server-everything in its streamableHttp mode on a free loopback port. */
export async function startEverything() {
  if (!existsSync(EVERYTHING)) {
    throw new Error(`${EVERYTHING} is missing: run scripts/ensure-mcp-test-servers.sh (make test-web does it)`);
  }
  // listen-on-loopback.mjs binds the server to 127.0.0.1 and reports the port PORT=0 gave it.
  const child = spawn(process.execPath, ['--import', join(SERVERS, 'listen-on-loopback.mjs'), EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    // Every line is read, so that a full pipe never stalls the server.
    createInterface({ input: child.stderr }).on('line', (line) => {
      const found = /^LISTENING-ON-PORT (\d+)$/.exec(line);
      if (found) resolve(Number(found[1]));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}) before it listened`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const ADD_TOOL = {
  name: 'add_tool',
  description: 'Adds the tool `late` and says the tool list changed.',
  inputSchema: { type: 'object', properties: {} },
};
const LATE = {
  name: 'late',
  description: 'A tool added while the server runs.',
  inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};
const text = (t) => ({ content: [{ type: 'text', text: t }] });

/** One MCP session's server: `late` is listed once `add_tool` was called. */
function listChangingSession() {
  let added = false;
  const server = new Server({ name: 'list-changing', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: added ? [ADD_TOOL, LATE] : [ADD_TOOL] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
    if (params.name === 'add_tool') {
      added = true;
      // Sent on this call's own event stream, so the client has it before the call's result
      // (on the session's separate GET stream the order of the two would be a race).
      await extra.sendNotification({ method: 'notifications/tools/list_changed' });
      return text('added late');
    }
    if (params.name === 'late' && added) return text(`late:${params.arguments?.word}`);
    return { ...text(`no tool named ${params.name}`), isError: true };
  });
  return server;
}

/** What a page on another origin needs to reach the server (as server-everything sends them). */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, DELETE',
  'access-control-allow-headers': 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
  'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version',
};

/**
 * An MCP server whose tool list changes while a client is connected: its tool `add_tool` adds
 * the tool `late` and announces `notifications/tools/list_changed`. server-everything
 * announces a change only while a session initializes (it adds the tools that depend on the
 * client's capabilities then, before the client's first tools/list), never on request, so it
 * cannot show a running session a changed list. This one is the official SDK's own server
 * (the same version the client is) over node:http, not a mock of the protocol.
 */
export async function startListChangingServer() {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    for (const [name, value] of Object.entries(CORS)) res.setHeader(name, value);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    let transport = sessions.get(id);
    if (!transport) {
      if (id) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such session');
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
        onsessionclosed: (sessionId) => sessions.delete(sessionId),
      });
      await listChangingSession().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    async stop() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
