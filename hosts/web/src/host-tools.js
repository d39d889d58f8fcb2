// The session's JavaScript tools: the application's own (`config.tools`) and those of tool
// sources whose list changes while the session runs (`config.toolSources`, e.g. an MCP
// server reached with fetch). The core asks for changes before each request to the model.

/**
 * A tool's parameters as the core takes them.
 * @param {import('./index.js').JsTool} tool
 */
export function definitionOf(tool) {
  return {
    name: tool.name,
    description: tool.description ?? '',
    parametersJson: JSON.stringify(tool.parameters ?? { type: 'object', properties: {} }),
  };
}

/** What a tool's result is for the core: text, and images when it returned some. */
function outputOf(result) {
  if (typeof result === 'string') return { text: result, images: [] };
  if (result && typeof result.text === 'string' && Array.isArray(result.images)) {
    return {
      text: result.text,
      images: result.images.map((image) => ({
        mediaType: String(image.mediaType),
        data: image.data instanceof Uint8Array ? image.data : new Uint8Array(image.data),
      })),
    };
  }
  return { text: JSON.stringify(result), images: [] };
}

export class HostTools {
  #fixed;
  #sources;
  #current = new Map();
  /** The sources' generations the session was last offered. */
  #seen;

  /**
   * @param {import('./index.js').JsTool[]} tools
   * @param {import('./index.js').ToolSource[]} sources
   */
  constructor(tools = [], sources = []) {
    this.#fixed = new Map(tools.map((tool) => [tool.name, tool]));
    this.#sources = sources;
    this.#seen = this.#generations();
    this.#rebuild();
  }

  #generations() {
    return this.#sources.map((source) => source.generation()).join(',');
  }

  /** Every tool by name: the application's first, then the sources' (a taken name is skipped). */
  #rebuild() {
    const tools = new Map(this.#fixed);
    for (const source of this.#sources) {
      for (const tool of source.tools()) {
        if (tools.has(tool.name)) {
          console.warn(`[agent-core] a tool source's tool "${tool.name}" is left out: another tool has that name`);
        } else {
          tools.set(tool.name, tool);
        }
      }
    }
    this.#current = tools;
  }

  /** The definitions of the session's configuration. */
  definitions() {
    return [...this.#current.values()].map(definitionOf);
  }

  /** Runs a tool; a thrown string is the model's error result. */
  async call(name, argumentsJson, context) {
    const tool = this.#current.get(name);
    if (!tool) throw `no tool named "${name}" is registered with this session`;
    try {
      return outputOf(await tool.call(JSON.parse(argumentsJson), context));
    } catch (e) {
      throw `${name} failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** All the definitions when a source's list changed since the last ask; `undefined` otherwise. */
  async changes() {
    if (this.#sources.length === 0) return undefined;
    await Promise.all(this.#sources.map((source) => source.refresh?.()));
    const generations = this.#generations();
    if (generations === this.#seen) return undefined;
    this.#seen = generations;
    this.#rebuild();
    return this.definitions();
  }
}
