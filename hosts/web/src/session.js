// A session of the core component in the browser: the page's side of `session-host`
// (events out; steering, follow-ups and interruptions in), plus approvals, JavaScript tools
// and subagents, over one component instance per session.

import { Checkpoints } from './checkpoints.js';
import { instantiateCore } from './component.js';
import { sessionConfig } from './config.js';
import { executionEnvironment } from './environment.js';
import { HostTools } from './host-tools.js';
import { SpendingLedger, TREE_LEDGER } from './spending.js';
import { Subagents } from './subagents.js';
import { llmTransport } from './transport.js';

/** A failed session call, with the component's error kind (`closed`, `busy`, `llm`, ...). */
export class AgentError extends Error {
  constructor(kind, message) {
    super(message ? `${kind}: ${message}` : kind);
    this.name = 'AgentError';
    this.kind = kind;
    this.detail = message;
  }
}

function agentError(e) {
  const payload = e?.payload;
  if (payload && typeof payload.tag === 'string') return new AgentError(payload.tag, payload.val);
  return e instanceof Error ? e : new AgentError('internal', String(e));
}

/** `tool-call-end` -> `TOOL_CALL_END`, the spec's (and the native host's) event names. */
function eventName(kind) {
  return kind.toUpperCase().replaceAll('-', '_');
}

/**
 * An agent session running in this page.
 *
 * ```js
 * const session = await AgentSession.open({ workspace, endpoints, config: { provider: 'anthropic' } });
 * session.on((event) => console.log(event.kind, event.data));
 * const outcome = await session.submit('Create hello.txt');
 * ```
 */
export class AgentSession {
  #core;
  #options;
  #listeners = new Set();
  #steering = [];
  #followUps = [];
  #interruption;
  #input = new AbortController();
  #wakers = new Set();
  #state = 'idle';
  #subagents;
  /** What this session and its subagents have spent (a child shares its parent's). */
  #spending;
  /** The workspace recorded before each input; none over an environment of the caller's. */
  #checkpoints;
  /** Events emitted before anyone listened (SESSION_START comes from the constructor). */
  #backlog = [];

  /**
   * Opens a session in a fresh component instance.
   * @param {import('./index.js').SessionOptions} options
   */
  static async open(options) {
    const session = new AgentSession(options);
    await session.#start(options);
    return session;
  }

  constructor(options) {
    if (!options?.workspace) throw new Error('AgentSession.open needs a workspace (a MemoryWorkspace)');
    this.#options = options;
    if (!options.environment) this.#checkpoints = new Checkpoints(options.workspace);
    this.#spending = options[TREE_LEDGER] ?? new SpendingLedger();
    const childOptions = { ...options, [TREE_LEDGER]: this.#spending };
    this.#subagents = new Subagents(this, childOptions, (options) => AgentSession.open(options));
  }

  async #start(options) {
    const tools = new HostTools(options.config?.tools, options.config?.toolSources);
    const api = await instantiateCore(
      {
        // An environment of the application's own written before `scratch-directory` existed
        // has none: the agent then only cuts long outputs.
        environment: options.environment
          ? { scratchDirectory: () => undefined, ...options.environment }
          : executionEnvironment(options.workspace),
        transport: llmTransport({
          endpoints: options.endpoints ?? {},
          signal: () => this.#input.signal,
          fetch: options.fetch,
        }),
        sessionHost: this.#sessionHost(),
        hostTools: {
          call: (_sessionId, name, argumentsJson) => tools.call(name, argumentsJson, { sessionId: this.id }),
          changes: () => tools.changes(),
        },
      },
      options.coreUrl,
    );
    this.#core = options.snapshot
      ? restore(api, options.snapshot)
      : new api.Session(sessionConfig({ ...options.config, tools: undefined }, tools.definitions()));
    this.id = this.#core.id();
  }

  /**
   * What this session and its subagents have spent together, the sum the budgets bound.
   * @returns {{tokens: number, costUsd: number}}
   */
  get treeSpending() {
    return this.#spending.total;
  }

  /** The lifecycle state: `idle`, `processing`, `awaiting-input` or `closed`. */
  get state() {
    return this.#state;
  }

  /**
   * Runs the agentic loop on an input until it stops (then any queued follow-ups).
   * @returns {Promise<{stopReason: string, rounds: number, turns: number, finalText: string}>}
   */
  async submit(input) {
    if (this.#state === 'closed') throw new AgentError('closed');
    if (this.#state === 'processing') throw new AgentError('busy', 'an input is already being processed; steer it instead');
    this.#state = 'processing';
    try {
      this.#checkpoints?.record(input);
      const note = this.#checkpoints?.takeNote();
      return await this.#core.submit(note ? `${note}\n\n${input}` : String(input));
    } catch (e) {
      throw agentError(e);
    } finally {
      // A cancel stops the input it arrived during, never the next one; an abort stays.
      if (this.#interruption === 'cancel-input') this.#interruption = undefined;
      if (this.#input.signal.aborted && this.#interruption === undefined) this.#input = new AbortController();
      this.#state = this.#core.state();
    }
  }

  /**
   * Makes the history smaller now: old tool outputs are elided and the older turns replaced
   * by a summary the model writes (the recent turns stay); a COMPACTION event reports it.
   * Compaction also runs by itself before a request that would fill the context window.
   * @returns {Promise<{summarised: boolean, tokensBefore: number, tokensAfter: number, turnsBefore: number, turnsAfter: number}>}
   */
  async compact() {
    if (this.#state === 'closed') throw new AgentError('closed');
    if (this.#state === 'processing') throw new AgentError('busy', 'an input is being processed; compact when it ends');
    this.#state = 'processing';
    try {
      const report = await this.#core.compact();
      return {
        summarised: report.summarised,
        tokensBefore: Number(report.tokensBefore),
        tokensAfter: Number(report.tokensAfter),
        turnsBefore: report.turnsBefore,
        turnsAfter: report.turnsAfter,
      };
    } catch (e) {
      throw agentError(e);
    } finally {
      this.#state = this.#core.state();
    }
  }

  /**
   * The checkpoints recorded before each input, oldest first.
   * @returns {{input: number, label: string, createdMs: number, files: number}[]}
   */
  checkpoints() {
    return this.#checkpointsOrThrow().list();
  }

  /**
   * Puts the workspace's files back as they were before input `n` (numbered from 1), saying
   * which files changed; the model is told with the next input.
   */
  restore(n) {
    if (!Number.isInteger(n) || n < 1) throw new AgentError('checkpoints', `restore takes an input number (1 or more), not ${n}`);
    return this.#restoreTo(n);
  }

  /** `restore` to the latest checkpoint: undoes the last input (again: one further back). */
  undo() {
    return this.#restoreTo(undefined);
  }

  #restoreTo(n) {
    const checkpoints = this.#checkpointsOrThrow();
    if (this.#state === 'processing') throw new AgentError('busy', 'an input is being processed; restore when it ends');
    try {
      return checkpoints.restore(n);
    } catch (error) {
      throw new AgentError('checkpoints', error.message);
    }
  }

  #checkpointsOrThrow() {
    if (!this.#checkpoints) {
      throw new AgentError('checkpoints', 'this session has none: only a session over its MemoryWorkspace (no environment option) has checkpoints');
    }
    return this.#checkpoints;
  }

  /** Queues a message injected into the conversation after the current tool round. */
  steer(message) {
    this.#steering.push(String(message));
  }

  /** Queues an input processed after the current one completes. */
  followUp(message) {
    this.#followUps.push(String(message));
  }

  /** Stops the current input (its request is aborted); the session stays usable. */
  cancel() {
    if (this.#state !== 'processing' || this.#interruption) return;
    this.#interrupt('cancel-input');
  }

  /** Shuts the session down: the current input stops, then the session closes. */
  abort() {
    if (this.#state === 'closed') return;
    this.#interrupt('abort-session');
    this.#subagents.closeAll();
    if (this.#state !== 'processing') this.close();
  }

  #interrupt(kind) {
    this.#interruption = kind;
    this.#input.abort(kind);
    for (const wake of this.#wakers) wake();
  }

  /** Changes the reasoning effort (`low`, `medium`, `high` or undefined) from the next call on. */
  setReasoningEffort(effort) {
    this.#core.setReasoningEffort(effort);
  }

  /** The conversation history (turns), when no input is being processed. */
  history() {
    return JSON.parse(this.#core.historyJson());
  }

  /** Everything needed to reopen the session later (`AgentSession.open({ snapshot })`). */
  snapshot() {
    return this.#core.snapshot();
  }

  /** The profile as the session uses it: capabilities, tools and the system prompt. */
  describe() {
    return JSON.parse(this.#core.describe());
  }

  /** Closes the session and its subagents (emits SESSION_END); idempotent. */
  close() {
    this.#subagents.closeAll();
    if (this.#state === 'closed') return;
    this.#core.close();
    this.#state = 'closed';
  }

  /**
   * Calls `listener(event)` for every event, subagents' included (they carry `agentId`).
   * @returns {() => void} unsubscribes
   */
  on(listener) {
    this.#listeners.add(listener);
    const early = this.#backlog;
    if (early) {
      this.#backlog = undefined;
      for (const event of early) this.#notify(listener, event);
    }
    return () => this.#listeners.delete(listener);
  }

  /** The events as an async iterator that ends after SESSION_END. */
  events() {
    const queue = [];
    let wake;
    let ended = false;
    const unsubscribe = this.on((event) => {
      queue.push(event);
      if (event.kind === 'SESSION_END' && !event.agentId) ended = true;
      wake?.();
    });
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      async next() {
        while (queue.length === 0) {
          if (ended) {
            unsubscribe();
            return { done: true, value: undefined };
          }
          await new Promise((resolve) => (wake = resolve));
        }
        return { done: false, value: queue.shift() };
      },
      async return() {
        unsubscribe();
        return { done: true, value: undefined };
      },
    };
  }

  /**
   * Delivers an event to the listeners (a subagent's, tagged with its id). Until the first
   * listener subscribes, events are kept for it, so it sees the session from its start.
   */
  deliver(event) {
    if (this.#backlog) {
      this.#backlog.push(event);
      return;
    }
    for (const listener of this.#listeners) this.#notify(listener, event);
  }

  #notify(listener, event) {
    try {
      listener(event);
    } catch (e) {
      console.error('an event listener failed', e);
    }
  }

  #sessionHost() {
    return {
      // Listeners run after the component's call returns or suspends: a listener may then
      // call back into the session without re-entering the instance mid-call.
      emit: (event) => {
        const delivered = {
          kind: eventName(event.kind),
          sessionId: event.sessionId,
          timestampMs: Number(event.timestampMs),
          data: JSON.parse(event.dataJson),
        };
        queueMicrotask(() => this.deliver(delivered));
      },
      // The browser host keeps no journal: `snapshot()` is how a page saves a session.
      recordHistory: () => {},
      takeSteering: () => this.#steering.splice(0),
      takeFollowUps: () => this.#followUps.splice(0),
      abortRequested: () => this.#interruption,
      sleep: (_sessionId, ms) => this.#sleep(Number(ms)),
      log: (level, message) => (this.#options.onLog ?? defaultLog)(level, message),
      approve: (request) => this.#approve(request),
      spawnSubagent: (request) => this.#subagents.spawn(request),
      subagentSend: (agentId, message) => this.#subagents.send(agentId, message),
      subagentWait: (agentId) => this.#subagents.wait(agentId),
      subagentClose: (agentId) => this.#subagents.close(agentId),
      spend: (_sessionId, amount, released) => this.#spending.spend(amount, released),
    };
  }

  /** Resolves after `ms`, or at once with true when an interruption arrives. */
  #sleep(ms) {
    if (this.#interruption) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => finish(true);
      const timer = setTimeout(() => finish(false), ms);
      const finish = (interrupted) => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        resolve(interrupted);
      };
      this.#wakers.add(wake);
    });
  }

  async #approve(request) {
    const approve = this.#options.approve;
    if (!approve) return { tag: 'allow' };
    try {
      const decision = await approve({
        sessionId: request.sessionId,
        callId: request.callId,
        toolName: request.toolName,
        arguments: JSON.parse(request.argumentsJson),
        summary: request.summary,
        category: request.category,
      });
      if (decision === true || decision === undefined) return { tag: 'allow' };
      return { tag: 'deny', val: typeof decision === 'string' ? decision : 'the user declined this tool call' };
    } catch (e) {
      return { tag: 'deny', val: `the approval failed: ${e instanceof Error ? e.message : e}` };
    }
  }
}

function restore(api, snapshot) {
  try {
    return api.Session.restore(snapshot);
  } catch (e) {
    throw agentError(e);
  }
}

function defaultLog(level, message) {
  const method = { trace: 'debug', debug: 'debug', info: 'info', warn: 'warn', error: 'error' }[level] ?? 'log';
  console[method](`[agent-core] ${message}`);
}
