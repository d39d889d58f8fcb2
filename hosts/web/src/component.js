// Instantiating the transpiled core component. Every session gets its own instance (a
// suspended `submit` must not be re-entered by another session's call), while the compiled
// core modules are fetched and compiled once per URL and shared.

import { instantiate } from '../gen/agent-core.js';

/** Where `make web` puts the transpiled component, relative to this module. */
export const DEFAULT_CORE_URL = new URL('../gen/', import.meta.url);

const compiled = new Map();

function coreModuleLoader(coreUrl) {
  return (path) => {
    const url = new URL(path, coreUrl).href;
    if (!compiled.has(url)) {
      // arrayBuffer + compile rather than compileStreaming: it does not depend on the
      // server sending `application/wasm`.
      const module = fetch(url)
        .then((response) => {
          if (!response.ok) throw new Error(`cannot load the core component's ${path} from ${url}: HTTP ${response.status}`);
          return response.arrayBuffer();
        })
        .then((bytes) => WebAssembly.compile(bytes));
      module.catch(() => compiled.delete(url));
      compiled.set(url, module);
    }
    return compiled.get(url);
  };
}

const wallClock = {
  now() {
    const ms = Date.now();
    return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1_000_000 };
  },
  resolution() {
    return { seconds: 0n, nanoseconds: 1_000_000 };
  },
};

const random = {
  getRandomBytes(len) {
    const bytes = new Uint8Array(Number(len));
    // getRandomValues fills at most 64 KiB per call.
    for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
    return bytes;
  },
  getRandomU64() {
    return new BigUint64Array(crypto.getRandomValues(new BigUint64Array(1)).buffer)[0];
  },
};

/** Offers each interface under its versioned and unversioned name: jco's code reads the latter. */
function importObject(interfaces) {
  const imports = {};
  for (const [name, implementation] of Object.entries(interfaces)) {
    imports[name] = implementation;
    imports[name.replace(/@[^/#]+$/, '')] = implementation;
  }
  return imports;
}

/**
 * A fresh instance of the core component.
 * @param {object} hosts the implementations of the component's imports
 * @param {URL|string} [coreUrl] the folder holding the transpiled core modules
 * @returns {Promise<{ Session: any, runTool: Function }>} the `agent` export
 */
export async function instantiateCore(hosts, coreUrl = DEFAULT_CORE_URL) {
  if (typeof WebAssembly.Suspending !== 'function') {
    throw new Error(
      'this browser lacks WebAssembly JSPI (WebAssembly.Suspending), which the agent needs to ' +
        'stream from fetch(); use Chromium 137 or newer',
    );
  }
  const root = await instantiate(
    coreModuleLoader(coreUrl),
    importObject({
      'wasi:clocks/wall-clock@0.2.12': wallClock,
      'wasi:random/random@0.2.12': random,
      'agent:core/types@0.1.0': {},
      'agent:core/execution-environment@0.1.0': hosts.environment,
      'agent:core/llm-transport@0.1.0': hosts.transport,
      'agent:core/session-host@0.1.0': hosts.sessionHost,
      'agent:core/host-tools@0.1.0': hosts.hostTools,
    }),
  );
  return root.agent;
}
