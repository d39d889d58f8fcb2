// Subagents in the browser: each child is a session of its own component instance, working
// concurrently with its parent (both suspend on fetch() under JSPI), on the same in-memory
// workspace or a subdirectory of it. Their events reach the parent's listeners with `agentId`.

import { executionEnvironment } from './environment.js';

export class Subagents {
  #parent;
  #options;
  #open;
  #children = new Map();
  #spawned = 0;

  /** `open` starts a session (`AgentSession.open`), handed in by the parent's class. */
  constructor(parent, options, open) {
    this.#parent = parent;
    this.#options = options;
    this.#open = open;
  }

  /** Starts a child on its task; resolves to its id as soon as it is running. */
  async spawn(request) {
    const config = this.#options.config ?? {};
    const workingDir = request.workingDir?.replace(/^\.\/?|\/+$/g, '') || undefined;
    if (workingDir && !this.#options.workspace.exists(workingDir)) {
      throw `working_dir "${request.workingDir}" does not exist in the workspace`;
    }
    const id = `agent-${++this.#spawned}`;
    let child;
    try {
      child = await this.#open({
        ...this.#options,
        snapshot: undefined,
        environment: executionEnvironment(this.#options.workspace, { cwd: workingDir }),
        config: {
          ...config,
          model: request.model ?? config.model,
          depth: request.depth,
          sessionId: undefined,
          limits: { ...(config.limits ?? {}), maxTurns: request.maxTurns },
        },
      });
    } catch (e) {
      throw `the subagent could not start: ${e instanceof Error ? e.message : e}`;
    }
    child.on((event) => this.#parent.deliver({ ...event, agentId: id }));
    const entry = { child, run: undefined };
    this.#children.set(id, entry);
    this.#run(entry, request.task);
    return id;
  }

  #run(entry, input) {
    entry.run = entry.child.submit(input).then(
      (outcome) => ({ output: outcome.finalText, success: outcome.stopReason === 'completed', turnsUsed: outcome.turns }),
      (error) => ({ output: `the subagent failed: ${error.message}`, success: false, turnsUsed: 0 }),
    );
  }

  /** Steers a working child, or starts a new input for an idle one. */
  send(id, message) {
    const entry = this.#entry(id);
    if (entry.child.state === 'closed') throw `subagent ${id} has ended`;
    if (entry.child.state === 'processing') entry.child.steer(message);
    else this.#run(entry, message);
  }

  /** Waits until the child is done with its current input. */
  async wait(id) {
    return this.#entry(id).run;
  }

  /** Aborts a child and forgets it. */
  close(id) {
    const entry = this.#entry(id);
    this.#children.delete(id);
    entry.child.abort();
  }

  closeAll() {
    for (const id of [...this.#children.keys()]) this.close(id);
  }

  #entry(id) {
    const entry = this.#children.get(id);
    if (!entry) throw `no subagent with id "${id}"`;
    return entry;
  }
}
