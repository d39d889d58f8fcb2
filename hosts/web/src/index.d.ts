// Types of the browser host's public API (the component's own generated types are in
// ../gen/agent-core.d.ts and ../gen/interfaces/).

/** The component's `execution-environment` import, as jco types it. */
export type ExecutionEnvironment = typeof import('../gen/interfaces/agent-core-execution-environment.js');

/** A file's contents when seeding or exporting a workspace; `null` marks an empty directory (key ending in `/`). */
export type FileContents = string | Uint8Array | null;

export interface WorkspaceEntry {
  /** Path relative to the workspace root, with `/` separators. */
  path: string;
  kind: 'file' | 'directory';
  size: number;
  modifiedMs: number;
}

export interface WorkspaceChange {
  kind: 'write' | 'delete' | 'rename' | 'mkdir';
  /** Path relative to the workspace root. */
  path: string;
  /** The new path of a rename. */
  to?: string;
}

export type WorkspaceErrorCode = 'not-found' | 'is-directory' | 'not-a-directory' | 'already-exists' | 'invalid-input' | 'denied';

export class WorkspaceError extends Error {
  readonly code: WorkspaceErrorCode;
}

/** An in-memory filesystem under one root directory (default `/workspace`). */
export class MemoryWorkspace {
  constructor(files?: Record<string, FileContents>, options?: { root?: string; now?: () => number });
  static fromObject(files: Record<string, FileContents>, options?: { root?: string; now?: () => number }): MemoryWorkspace;
  static fromZip(bytes: Uint8Array, options?: { root?: string; now?: () => number }): MemoryWorkspace;
  readonly root: string;
  resolve(path: string): string;
  readFile(path: string): Uint8Array;
  readText(path: string): string;
  writeFile(path: string, contents: string | Uint8Array): void;
  deleteFile(path: string): void;
  renameFile(from: string, to: string): void;
  mkdir(path: string): void;
  exists(path: string): boolean;
  stat(path: string): { kind: 'file' | 'directory'; size: number; modifiedMs: number };
  entries(): WorkspaceEntry[];
  files(): WorkspaceEntry[];
  toObject(): Record<string, FileContents>;
  toZip(): Uint8Array;
  onChange(listener: (change: WorkspaceChange) => void): () => void;
}

/** The component's `execution-environment` over a workspace; `cwd` scopes it to a subdirectory. */
export function executionEnvironment(
  workspace: MemoryWorkspace,
  options?: { cwd?: string; osVersion?: string },
): ExecutionEnvironment;

export type WireProtocol = 'anthropic-messages' | 'openai-responses' | 'gemini' | 'chat-completions';

/** Where requests to a named endpoint go; the key stays in the page. */
export interface Endpoint {
  baseUrl: string;
  apiKey?: string;
  /** Decides how the key is sent (default: `anthropic-messages`). */
  protocol?: WireProtocol;
  /** Overrides the key's header: `x-api-key`, `bearer` or `x-goog-api-key`. */
  auth?: 'x-api-key' | 'bearer' | 'x-goog-api-key';
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

export interface Limits {
  maxTurns: number;
  maxToolRoundsPerInput: number;
  /** 0: the provider family's default (120 s for Anthropic, 10 s for OpenAI and Gemini). */
  defaultCommandTimeoutMs: number;
  maxCommandTimeoutMs: number;
  enableLoopDetection: boolean;
  loopDetectionWindow: number;
  maxSubagentDepth: number;
  /** Refuse edits of a file changed since the session read it, and overwrites of unread files (default true). */
  staleReadGuard: boolean;
  /** Budget of the session's tokens (prompt and output); 0: none. */
  maxSessionTokens: number;
  /** Budget of the session's cost in US cents at the catalog's prices (a model without a price is refused); 0: none. */
  maxCostCents: number;
}

/** A tool implemented in JavaScript, offered to the model next to the profile's own. */
export interface JsTool {
  name: string;
  description?: string;
  /** JSON schema (an object schema) of the arguments. */
  parameters?: object;
  /**
   * Returns the result: a string, a {@link ToolResult} (text and images), or any other value,
   * sent as JSON. A thrown error is the model's error result.
   */
  call(args: any, context: { sessionId: string }): string | ToolResult | unknown | Promise<string | ToolResult | unknown>;
}

/** A tool's result with images (PNG, JPEG, GIF or WebP; others are named in the text instead). */
export interface ToolResult {
  text: string;
  images: Array<{ mediaType: string; data: Uint8Array }>;
}

/**
 * Tools whose list changes while sessions run (an MCP server): a session is offered the new
 * list from its next request. A tool whose name is taken is left out with a warning.
 */
export interface ToolSource {
  /** The tools now. */
  tools(): JsTool[];
  /** A number that changes whenever `tools()` does. */
  generation(): number;
  /** Reads the list again if the source said it changed; asked before each request. */
  refresh?(): Promise<void>;
}

export interface McpServerOptions {
  /**
   * Its tools are offered as `NAME__tool`: letters, digits, '_' and '-' (at most 32), no `__`
   * and no '_' at its end. A tool whose full name is not `^[A-Za-z0-9_-]{1,64}$` is left out.
   */
  name: string;
  /** The server's streamable HTTP endpoint (a server on another origin must allow it with CORS). */
  url: string | URL;
  /** Sent with every request (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** Replaces `globalThis.fetch` for the server's requests. */
  fetch?: typeof fetch;
  /** How long initialize, tools/list and each tools/call may take (default 60000). */
  timeoutMs?: number;
}

/**
 * An MCP server over streamable HTTP, reached with fetch: a {@link ToolSource} for
 * `config.toolSources`. At most 64 tools and 256 KiB of definitions are offered (the rest left
 * out with a console warning); a list the server announces as changed is offered to sessions
 * from their next request. A call returns the text (with images when the server sent some);
 * the server's error result, a timeout or a lost connection is the model's error result.
 */
export class McpServer implements ToolSource {
  /** Connects, initializes the MCP session and lists the tools; rejects naming the server and URL. */
  static connect(options: McpServerOptions): Promise<McpServer>;
  private constructor();
  readonly name: string;
  readonly url: string;
  tools(): JsTool[];
  generation(): number;
  refresh(): Promise<void>;
  /** Ends the MCP session; its tools fail from then on. */
  close(): Promise<void>;
}

export interface SessionConfigOptions {
  /** Tool and prompt profile: `anthropic` (default), `openai` or `gemini`. */
  provider?: 'anthropic' | 'openai' | 'gemini';
  model?: string;
  /** Name of an entry of `endpoints` (default: the provider's name). */
  endpoint?: string;
  protocol?: WireProtocol;
  reasoningEffort?: 'low' | 'medium' | 'high';
  maxOutputTokens?: number;
  limits?: Partial<Limits>;
  toolOutputLimits?: Array<{ tool: string; maxChars?: number; maxLines?: number }>;
  enabledTools?: string[];
  disabledTools?: string[];
  tools?: JsTool[];
  /** Tools whose list changes while the session runs (e.g. an MCP server). */
  toolSources?: ToolSource[];
  userInstructions?: string;
  providerOptions?: object;
  /** A JSON Schema the final answer must match, asked for through the protocol's structured output. */
  outputSchema?: object;
  depth?: number;
  sessionId?: string;
  contextWindowTokens?: number;
  parallelToolCalls?: boolean;
  imageInput?: boolean;
  knowledgeCutoff?: string;
  /** Error-recovery reminders after failed tool calls (default: the profile's choice). */
  systemReminders?: boolean;
  /**
   * How failed LLM requests (network errors, rate limits, overloaded or failing servers) are
   * retried: doubling waits with jitter from `baseDelayMs`, never above `maxDelayMs` (at most
   * 600000); at most 20 retries. Unset (or a part left out): 2 retries from 1 s up to 60 s.
   */
  retry?: { maxRetries?: number; baseDelayMs?: number; maxDelayMs?: number };
}

export interface ApprovalRequest {
  sessionId: string;
  callId: string;
  toolName: string;
  arguments: any;
  summary: string;
  /** What the tool does (`host` for a JavaScript tool). */
  category: ToolCategory;
}

export interface SessionOptions {
  workspace: MemoryWorkspace;
  endpoints?: Record<string, Endpoint>;
  config?: SessionConfigOptions;
  /** `true` (or nothing) allows the call; a string denies it with that reason. */
  approve?: (request: ApprovalRequest) => boolean | string | void | Promise<boolean | string | void>;
  /** Reopens a session from `session.snapshot()`. */
  snapshot?: string;
  /** Folder of the transpiled core modules (default: the package's `gen/`). */
  coreUrl?: URL | string;
  /** Replaces `globalThis.fetch` for LLM requests. */
  fetch?: typeof fetch;
  /** Receives the component's log lines (default: the console). */
  onLog?: (level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string) => void;
  /** Replaces the environment built from `workspace`. */
  environment?: ExecutionEnvironment;
}

export type EventKind = AgentEvent['kind'];

export type StopReasonName = 'completed' | 'round_limit' | 'turn_limit' | 'awaiting_input' | 'cancelled' | 'aborted' | 'context_length';
export type ErrorKindName =
  | 'authentication' | 'permission_denied' | 'not_found' | 'invalid_request' | 'context_length' | 'rate_limit'
  | 'overloaded' | 'server' | 'content_filter' | 'network' | 'stream' | 'configuration' | 'cancelled';
/** What a tool does: hosts decide approvals and views by it. */
export type ToolCategory = 'read' | 'search' | 'write' | 'command' | 'agent' | 'host';

/** The session configuration as events carry it (the Rust crate agent-protocol's `SessionConfig`). */
export interface SessionConfigData {
  provider: string;
  model: string;
  endpoint: string;
  protocol: WireProtocol;
  reasoning_effort: 'low' | 'medium' | 'high' | null;
  max_output_tokens: number | null;
  limits: {
    max_turns: number;
    max_tool_rounds_per_input: number;
    /** `null`: the provider family's default. */
    default_command_timeout_ms: number | null;
    max_command_timeout_ms: number;
    enable_loop_detection: boolean;
    loop_detection_window: number;
    max_subagent_depth: number;
    stale_read_guard: boolean;
    max_session_tokens?: number;
    max_cost_cents?: number;
  };
  tool_output_limits: Array<{ tool: string; max_chars: number | null; max_lines: number | null }>;
  enabled_tools: string[] | null;
  disabled_tools: string[];
  host_tools: Array<{ name: string; description: string; parameters: unknown }>;
  user_instructions: string | null;
  provider_options: unknown;
  depth: number;
  session_id: string | null;
  context_window_size: number | null;
  parallel_tool_calls: boolean | null;
  image_input: boolean | null;
  knowledge_cutoff: string | null;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Tokens spent reasoning (absent when none were reported). */
  reasoning_tokens?: number;
}

/** Requests and their token usage and cost added up: the same meaning for every provider. */
export interface UsageTotals {
  requests: number;
  /** Every prompt token, cached or not. */
  prompt_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  /** Every token billed as output, reasoning included. */
  output_tokens: number;
  reasoning_tokens: number;
  /** US dollars at the model catalog's prices; null when a model has none. */
  cost_usd: number | null;
}

export type WarningData =
  | { kind: 'context_length'; message: string }
  | { kind: 'llm_retry'; message: string; attempt: number; delay_ms: number; error_kind: ErrorKindName }
  | { kind: 'context_usage'; message: string; tokens: number; context_window: number; percent: number; source: 'provider' | 'estimate' }
  | { kind: 'persistence'; message: string }
  | { kind: 'instance_restarted'; message: string }
  | { kind: 'compaction'; message: string };

/**
 * The payload of each event kind, field for field as the core emits it (snake_case). The
 * Rust crate agent-protocol defines them; `test/types.test.mjs` type-checks its fixtures of
 * every kind against these declarations.
 */
export interface EventDataByKind {
  SESSION_START: { config: SessionConfigData };
  SESSION_END: { final_state: 'closed'; reason: 'closed' | 'error' | 'aborted' };
  USER_INPUT: { content: string };
  /** `usage`: this input's requests added up; `session_usage`: the session's so far (absent before any request). */
  PROCESSING_END: { stop_reason: StopReasonName; rounds: number; turns: number; usage?: UsageTotals; session_usage?: UsageTotals };
  ASSISTANT_TEXT_START: {};
  ASSISTANT_TEXT_DELTA: { delta: string };
  ASSISTANT_TEXT_END: {
    text: string;
    reasoning: string | null;
    tool_calls: Array<{ id: string; name: string; arguments: unknown }>;
    usage: Usage;
    finish_reason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';
  };
  REASONING_START: {};
  REASONING_DELTA: { delta: string };
  REASONING_END: {};
  TOOL_CALL_START: {
    call_id: string;
    tool_name: string;
    arguments: unknown;
    category: ToolCategory;
    /** The files the call means to change (write_file, edit_file, apply_patch). */
    changes?: string[];
  };
  TOOL_CALL_OUTPUT_DELTA: { call_id: string; stream: 'stdout' | 'stderr'; delta: string };
  /** The FULL untruncated `output` (with `images` when any were shown to the model), or `error`. */
  TOOL_CALL_END:
    | {
        call_id: string;
        tool_name: string;
        output: string;
        images?: Array<{ media_type: string; base64_chars: number }>;
        error?: never;
      }
    | { call_id: string; tool_name: string; error: string; output?: never; images?: never };
  STEERING_INJECTED: { content: string };
  PLAN_UPDATED: {
    explanation?: string;
    plan: { step: string; status: 'pending' | 'in_progress' | 'completed' }[];
  };
  TURN_LIMIT: { limit: 'max_tool_rounds_per_input' | 'max_turns' | 'max_session_tokens' | 'max_cost_cents'; value: number };
  LOOP_DETECTION: { message: string; window: number; pattern_length: number };
  /** The history was made smaller; token counts are estimates of the whole request. */
  COMPACTION: {
    trigger: 'threshold' | 'context_length' | 'requested';
    stage: 'tool_outputs_elided' | 'summarised';
    tokens_before: number;
    tokens_after: number;
    turns_before: number;
    turns_after: number;
    summary_usage: Usage;
  };
  WARNING: WarningData;
  ERROR: { message: string; kind: ErrorKindName; retryable: boolean };
  /** Host-emitted by agent-host (a sandboxed command's connection through its network
   *  allow-list's proxy); the browser host runs no commands and never emits it. */
  NETWORK_CONNECTION: {
    call_id?: string;
    host: string;
    port: number;
    address?: string;
    method: string;
    allowed: boolean;
    reason?: string;
    bytes_up: number;
    bytes_down: number;
    duration_ms: number;
  };
}

/** One event: `data` is typed by `kind` (narrow with `event.kind === 'TOOL_CALL_END'`). */
export type AgentEvent = {
  [K in keyof EventDataByKind]: {
    kind: K;
    sessionId: string;
    timestampMs: number;
    data: EventDataByKind[K];
    /** Set on a subagent's events. */
    agentId?: string;
  };
}[keyof EventDataByKind];

export type StopReason = 'completed' | 'round-limit' | 'turn-limit' | 'awaiting-input' | 'cancelled' | 'aborted' | 'context-length';

export interface SubmitOutcome {
  stopReason: StopReason;
  rounds: number;
  turns: number;
  finalText: string;
}

export class AgentError extends Error {
  readonly kind: 'closed' | 'busy' | 'invalid-config' | 'llm' | 'internal' | 'checkpoints';
  readonly detail?: string;
}

/** The workspace's files recorded before one input. */
export interface Checkpoint {
  /** The input's number in the session, from 1. */
  input: number;
  /** The input's first line, shortened. */
  label: string;
  createdMs: number;
  /** Files recorded. */
  files: number;
}

/** What `compact` did; token counts are estimates of the whole request. */
export interface CompactionReport {
  /** Whether older turns were replaced by a summary (else only old tool outputs were elided). */
  summarised: boolean;
  tokensBefore: number;
  tokensAfter: number;
  turnsBefore: number;
  turnsAfter: number;
}

/** What a restore changed. */
export interface Restored {
  /** The files are as they were before this input. */
  input: number;
  /** Written back (changed or deleted since). */
  restored: string[];
  /** Created since, removed. */
  removed: string[];
  failed: { path: string; reason: string }[];
}

export class AgentSession {
  static open(options: SessionOptions): Promise<AgentSession>;
  readonly id: string;
  readonly state: 'idle' | 'processing' | 'awaiting-input' | 'closed';
  /** What this session and its subagents have spent together: the sum `maxSessionTokens` and `maxCostCents` bound. */
  readonly treeSpending: { tokens: number; costUsd: number };
  submit(input: string): Promise<SubmitOutcome>;
  steer(message: string): void;
  followUp(message: string): void;
  cancel(): void;
  abort(): void;
  setReasoningEffort(effort: 'low' | 'medium' | 'high' | undefined): void;
  history(): unknown[];
  snapshot(): string;
  /** The workspace's checkpoints, recorded before each input (none with an `environment` option). */
  checkpoints(): Checkpoint[];
  /** Puts the files back as they were before input `n`; the model is told with the next input. */
  restore(n: number): Restored;
  /** `restore` to the latest checkpoint (again: one input further back). */
  undo(): Restored;
  describe(): Record<string, any>;
  /** Elides old tool outputs and summarises the older turns now (also automatic). */
  compact(): Promise<CompactionReport>;
  close(): void;
  on(listener: (event: AgentEvent) => void): () => void;
  events(): AsyncIterableIterator<AgentEvent>;
}

export function sessionConfig(options?: SessionConfigOptions): import('../gen/interfaces/agent-core-agent.js').SessionConfig;
export const DEFAULT_MODELS: Readonly<Record<'anthropic' | 'openai' | 'gemini', string>>;
export const DEFAULT_LIMITS: Readonly<Limits>;
export const PROVIDER_ENDPOINTS: Readonly<Record<'anthropic' | 'openai' | 'gemini', { baseUrl: string; protocol: WireProtocol }>>;
export function authHeaders(endpoint: Endpoint): Array<[string, string]>;
export function endpointUrl(baseUrl: string, path: string): string;
export function llmTransport(options: {
  endpoints: Record<string, Endpoint>;
  signal: () => AbortSignal;
  fetch?: typeof fetch;
}): typeof import('../gen/interfaces/agent-core-llm-transport.js');
export const DEFAULT_CORE_URL: URL;
export function instantiateCore(hosts: object, coreUrl?: URL | string): Promise<typeof import('../gen/interfaces/agent-core-agent.js')>;
