// MCP servers over streamable HTTP, reached with fetch: a server's tools are a
// `ToolSource` offered as `NAME__tool`, read again when the server announces that its list
// changed, and called with a timeout. The protocol itself is the official TypeScript SDK's.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

/** Between the server's name and the tool's, as codex, Claude Code and agent-host join them. */
const SEPARATOR = '__';
/** A tool name every provider accepts. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The limits agent-host puts on one server: it cannot fill every request with definitions. */
const MAX_TOOLS = 64;
const MAX_DEFINITION_BYTES = 256 * 1024;
/** A server cannot keep a listing going forever. */
const MAX_TOOL_PAGES = 20;
const DEFAULT_TIMEOUT_MS = 60_000;
const CLIENT_INFO = { name: 'agent-core-web', version: '0.1.0' };

const warn = (message) => console.warn(`[agent-core] ${message}`);
const utf8Length = (text) => new TextEncoder().encode(text).length;

/** What counts towards a server's MAX_DEFINITION_BYTES, as agent-host counts it. */
const definitionBytes = (tool) =>
  utf8Length(tool.name) + utf8Length(tool.description ?? '') + utf8Length(JSON.stringify(tool.inputSchema ?? {}));

/** agent-host's rule: short enough that NAME__tool fits with most tool names, no separator in it. */
function checkServerName(name) {
  const usable =
    typeof name === 'string' && /^[A-Za-z0-9_-]{1,32}$/.test(name) && !name.includes(SEPARATOR) && !name.endsWith('_');
  if (!usable) {
    throw new Error(
      `${JSON.stringify(name)} is not a usable MCP server name: its tools are offered as NAME__tool, so it ` +
        `takes letters, digits, '_' and '-' (at most 32), no "__" and no '_' at its end`,
    );
  }
}

/** An error's message with its cause (Node's fetch hides ECONNREFUSED there). */
function messageOf(error) {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !message.includes(cause) ? `${message} (${cause})` : message;
}

const isTimeout = (error) => error instanceof McpError && error.code === ErrorCode.RequestTimeout;

/** How many bytes a base64 text decodes to, without decoding it. */
function decodedLength(base64) {
  const trimmed = base64.trim();
  const padding = trimmed.length - trimmed.replace(/=+$/, '').length;
  return Math.max(0, Math.floor(trimmed.length / 4) * 3 - padding);
}

/** A base64 text as bytes; `undefined` when it is not valid base64. */
function decodeBase64(base64) {
  try {
    const binary = atob(base64.trim());
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** The line that names what cannot be given to the model. */
const notShown = (kind, mimeType, base64) =>
  `[${kind}: ${mimeType}, ${decodedLength(base64)} bytes; not shown: only text and images reach the model]`;

/**
 * A block that carries an image (an image block, or a binary resource of an image type) as
 * `{ image }`, or `{ note }` when its data cannot be decoded; `undefined` for other blocks.
 */
function imageOf(block) {
  let what;
  let mimeType;
  let data;
  const { resource } = block;
  const imageBlob = block.type === 'resource' && typeof resource.blob === 'string' && resource.mimeType?.startsWith('image/');
  if (block.type === 'image') {
    [what, mimeType, data] = ['image', block.mimeType, block.data];
  } else if (imageBlob) {
    [what, mimeType, data] = [`resource ${resource.uri}`, resource.mimeType, resource.blob];
  } else {
    return undefined;
  }
  const bytes = decodeBase64(data);
  if (!bytes) return { note: `[${what}: ${mimeType}; not shown: its data is not valid base64]` };
  // The core checks the signature and size, and names in the text an image it cannot send.
  return { image: { mediaType: mimeType, data: bytes } };
}

/** Any other block as a line of text. */
function textOf(block) {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'audio':
      return notShown('audio', block.mimeType, block.data);
    case 'resource': {
      const { uri, text, blob, mimeType } = block.resource;
      if (typeof text === 'string') return `[resource ${uri}]\n${text}`;
      if (typeof blob === 'string') return notShown(`resource ${uri}`, mimeType ?? 'binary', blob);
      return '[a resource of a kind this host does not read]';
    }
    case 'resource_link':
      return `[resource link: ${block.uri} (${block.name})]`;
    default:
      return '[content of a kind this host does not read]';
  }
}

/**
 * A `tools/call` result as a tool's result for the session: the text (and the images, when
 * there are any); a result the server marked as an error is thrown with its text.
 */
export function resultOf(result) {
  const pieces = [];
  const images = [];
  for (const block of result.content ?? []) {
    const image = imageOf(block);
    if (image?.image) images.push(image.image);
    else pieces.push(image?.note ?? textOf(block));
  }
  // structuredContent is meant to repeat the content; only without content is it the answer.
  if (pieces.length === 0 && images.length === 0 && result.structuredContent !== undefined) {
    pieces.push(JSON.stringify(result.structuredContent));
  }
  const text = pieces.join('\n');
  if (result.isError === true) throw new Error(text || 'the tool reported an error without a message');
  return images.length > 0 ? { text, images } : text;
}

/** The tool's schema as providers take it: an object schema with properties. */
function parametersOf(tool) {
  const schema = { ...(tool.inputSchema ?? {}) };
  schema.type ??= 'object';
  schema.properties ??= {};
  return schema;
}

/** A `ToolSource`: one MCP server's tools, reached with fetch over streamable HTTP. */
export class McpServer {
  #name;
  #url;
  #client;
  #transport;
  #timeoutMs;
  /** The server's tools as it last listed them (to tell whether a new listing differs). */
  #listed = [];
  #tools = [];
  #generation = 1;
  /** The server announced that its tool list changed since it was last read. */
  #changed = false;
  /** The listing under way: listings run one after another, each sees the one before. */
  #listing = Promise.resolve();
  #connected = false;
  #closed = false;

  /**
   * Connects to the server, initializes the MCP session and lists its tools.
   * @param {{ name: string, url: string | URL, headers?: Record<string, string>,
   *   fetch?: typeof fetch, timeoutMs?: number }} options
   */
  static async connect({ name, url, headers, fetch, timeoutMs = DEFAULT_TIMEOUT_MS }) {
    checkServerName(name);
    if (!URL.canParse(url)) throw new Error(`the MCP server ${name}: ${JSON.stringify(String(url))} is not a URL`);
    const server = new McpServer(name, new URL(url), { headers, fetch, timeoutMs });
    await server.#start();
    return server;
  }

  /** Use `McpServer.connect`. */
  constructor(name, url, { headers, fetch, timeoutMs }) {
    this.#name = name;
    this.#url = url.href;
    this.#timeoutMs = timeoutMs;
    this.#transport = new StreamableHTTPClientTransport(url, {
      requestInit: headers ? { headers } : undefined,
      fetch,
    });
    this.#client = new Client(CLIENT_INFO);
    this.#client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#changed = true;
    });
    // The SDK reports here what went wrong outside a request too (its event stream for the
    // server's announcements dropping). Before the session is up, the failure is connect's
    // own error; after close, only the end of what close stopped.
    this.#client.onerror = (error) => {
      if (this.#connected && !this.#closed) warn(`MCP server ${this.name}: ${messageOf(error)}`);
    };
  }

  /** Its tools are offered as `NAME__tool`. */
  get name() {
    return this.#name;
  }

  get url() {
    return this.#url;
  }

  async #start() {
    try {
      await this.#client.connect(this.#transport, { timeout: this.#timeoutMs });
      // Cleared before listing: a change announced from now on is read again later.
      this.#changed = false;
      this.#replaceTools(await this.#listTools());
      this.#connected = true;
    } catch (error) {
      this.#closed = true;
      await this.#client.close().catch(() => {});
      const why = isTimeout(error) ? `it did not answer within ${this.#timeoutMs / 1000} s` : messageOf(error);
      throw new Error(`the MCP server ${this.name} at ${this.url} could not be connected: ${why}`, { cause: error });
    }
  }

  /** The server's tools, page by page up to MAX_TOOL_PAGES. */
  async #listTools() {
    const tools = [];
    let cursor;
    for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
      const listed = await this.#client.listTools(cursor ? { cursor } : undefined, { timeout: this.#timeoutMs });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) return tools;
    }
    warn(`MCP server ${this.name}: its tools past ${MAX_TOOL_PAGES} pages of tools/list are left out`);
    return tools;
  }

  /** Takes a new listing; the generation changes only when the list does. */
  #replaceTools(listed) {
    if (JSON.stringify(listed) === JSON.stringify(this.#listed)) return;
    this.#listed = listed;
    this.#tools = this.#offered(listed);
    this.#generation += 1;
  }

  /** The listed tools as JavaScript tools; what cannot be offered is left out with a warning. */
  #offered(listed) {
    const tools = [];
    let bytes = 0;
    for (const tool of listed) {
      const leftOut = (why) => warn(`MCP server ${this.name}: its tool ${JSON.stringify(tool.name)} ${why}`);
      const name = `${this.name}${SEPARATOR}${tool.name}`;
      if (!TOOL_NAME.test(name)) {
        // Renaming it would make a name the server does not know.
        leftOut(`is left out: ${name} is not a name providers accept (at most 64 letters, digits, '_' and '-')`);
        continue;
      }
      if (tool.execution?.taskSupport === 'required') {
        // The SDK's callTool refuses it: it must be started as a task and polled.
        leftOut('is left out: it runs only as an MCP task, which this host does not start');
        continue;
      }
      const description = tool.description ?? '(no description)';
      const size = definitionBytes(tool);
      if (tools.length === MAX_TOOLS || bytes + size > MAX_DEFINITION_BYTES) {
        leftOut(
          `and any after it are left out: a server offers at most ${MAX_TOOLS} tools and ` +
            `${MAX_DEFINITION_BYTES / 1024} KiB of definitions`,
        );
        break;
      }
      bytes += size;
      tools.push({ name, description, parameters: parametersOf(tool), call: (args) => this.#call(tool.name, args) });
    }
    return tools;
  }

  /** The tools it offers now. */
  tools() {
    return this.#tools;
  }

  /** Changes whenever `tools()` does. */
  generation() {
    return this.#generation;
  }

  /** Reads the tool list again if the server announced that it changed. */
  async refresh() {
    if (this.#changed && !this.#closed) {
      this.#changed = false;
      this.#listing = this.#listing.then(() => this.#relist());
    }
    await this.#listing;
  }

  async #relist() {
    try {
      this.#replaceTools(await this.#listTools());
    } catch (error) {
      // The session goes on with the tools it has; the next announcement tries again.
      warn(`MCP server ${this.name}: listing its changed tools failed: ${messageOf(error)}`);
    }
  }

  /** Calls the server's tool `tool` within the timeout. */
  async #call(tool, args) {
    if (this.#closed) {
      throw new Error(`the MCP server ${this.name} (${this.url}) is closed: its tools cannot be called`);
    }
    if (args !== null && args !== undefined && (typeof args !== 'object' || Array.isArray(args))) {
      throw new Error(`the arguments must be a JSON object, not ${JSON.stringify(args)}`);
    }
    let result;
    try {
      const params = { name: tool, arguments: args ?? {} };
      result = await this.#client.callTool(params, undefined, { timeout: this.#timeoutMs });
    } catch (error) {
      if (isTimeout(error)) {
        throw new Error(`the MCP server ${this.name} did not finish ${tool} within ${this.#timeoutMs / 1000} s`);
      }
      throw new Error(`the MCP server ${this.name} (${this.url}) failed on ${tool}: ${messageOf(error)}`);
    }
    return resultOf(result);
  }

  /**
   * Ends the MCP session and the connection. The server is told (DELETE) when it answers
   * within the timeout: a server that does not answer cannot hold the close up.
   */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    let timer;
    const late = new Promise((resolve) => (timer = setTimeout(resolve, this.#timeoutMs)));
    await Promise.race([this.#transport.terminateSession().catch(() => {}), late]);
    clearTimeout(timer);
    // Also aborts whatever is still in flight, the DELETE included.
    await this.#client.close();
  }
}
