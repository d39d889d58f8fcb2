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
  defaultCommandTimeoutMs: number;
  maxCommandTimeoutMs: number;
  enableLoopDetection: boolean;
  loopDetectionWindow: number;
  maxSubagentDepth: number;
}

/** A tool implemented in JavaScript, offered to the model next to the profile's own. */
export interface JsTool {
  name: string;
  description?: string;
  /** JSON schema (an object schema) of the arguments. */
  parameters?: object;
  /** Returns the result (a string, or a value sent as JSON); a thrown error is the model's error result. */
  call(args: any, context: { sessionId: string }): string | unknown | Promise<string | unknown>;
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
  userInstructions?: string;
  providerOptions?: object;
  depth?: number;
  sessionId?: string;
  contextWindowTokens?: number;
  parallelToolCalls?: boolean;
  imageInput?: boolean;
  knowledgeCutoff?: string;
}

export interface ApprovalRequest {
  sessionId: string;
  callId: string;
  toolName: string;
  arguments: any;
  summary: string;
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

export type EventKind =
  | 'SESSION_START' | 'SESSION_END' | 'USER_INPUT' | 'PROCESSING_END'
  | 'ASSISTANT_TEXT_START' | 'ASSISTANT_TEXT_DELTA' | 'ASSISTANT_TEXT_END'
  | 'REASONING_START' | 'REASONING_DELTA' | 'REASONING_END'
  | 'TOOL_CALL_START' | 'TOOL_CALL_OUTPUT_DELTA' | 'TOOL_CALL_END'
  | 'STEERING_INJECTED' | 'TURN_LIMIT' | 'LOOP_DETECTION' | 'WARNING' | 'ERROR';

export interface AgentEvent {
  kind: EventKind;
  sessionId: string;
  timestampMs: number;
  /** Kind-specific fields (see wit/session-host.wit), e.g. `tool_name`, `arguments`, `output`. */
  data: Record<string, any>;
  /** Set on a subagent's events. */
  agentId?: string;
}

export type StopReason = 'completed' | 'round-limit' | 'turn-limit' | 'awaiting-input' | 'cancelled' | 'aborted' | 'context-length';

export interface SubmitOutcome {
  stopReason: StopReason;
  rounds: number;
  turns: number;
  finalText: string;
}

export class AgentError extends Error {
  readonly kind: 'closed' | 'busy' | 'invalid-config' | 'llm' | 'internal';
  readonly detail?: string;
}

export class AgentSession {
  static open(options: SessionOptions): Promise<AgentSession>;
  readonly id: string;
  readonly state: 'idle' | 'processing' | 'awaiting-input' | 'closed';
  submit(input: string): Promise<SubmitOutcome>;
  steer(message: string): void;
  followUp(message: string): void;
  cancel(): void;
  abort(): void;
  setReasoningEffort(effort: 'low' | 'medium' | 'high' | undefined): void;
  history(): unknown[];
  snapshot(): string;
  describe(): Record<string, any>;
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
