// The component's `agent:core/execution-environment@0.1.0` import over a MemoryWorkspace.
//
// It mirrors the native host's local environment (hosts/agent-host/src/env/local.rs and
// search.rs) so that a scripted agent run gives the same results in both: the same error
// tags and wording, the same ignore rules (`.ignore` always, `.gitignore` inside a git
// repository, `.git` and, for grep and glob, hidden files skipped), the same sorting, the
// same grep limits and binary detection. Where JavaScript cannot do what Rust does (the
// regex dialect, mostly) the difference is noted where it happens.
//
// jco's conventions apply: `u64` values are BigInt, `option<T>` is `undefined` when none,
// and a `result` error is signalled by throwing the plain variant object
// (`throw { tag: 'not-found', val: '...' }`). An Error thrown instead would trap the
// component, so every fallible function turns unexpected failures into `other`.

import { MemoryWorkspace, WorkspaceError, compareCodePoints } from './workspace.js';
import { failure } from './fs-error.js';
import { compilePattern, searchFile } from './grep.js';
import { compileGlob } from './ignore-rules.js';
import { Paths } from './paths.js';
import { Tree } from './tree.js';

/** Largest piece of a file `read-file` returns at once (the native `MAX_READ`). */
const MAX_READ = 256n * 1024n * 1024n;
/** Matches returned by a grep that names no limit (the native `DEFAULT_GREP_LIMIT`). */
const DEFAULT_GREP_LIMIT = 1000;

/** Why `spawn` fails here, worded for the model so it changes approach instead of retrying. */
const NO_PROCESSES =
  'this is a browser: there is no process execution here (no shell, no interpreters, no git); ' +
  'work with the file tools (read_file, write_file, edit_file, apply_patch, grep, glob, list_dir) instead';


/**
 * The `process` resource. Nothing can construct one: `spawn` always fails in a browser. It
 * exists because jco expects the interface to provide the class.
 */
export class Process {
  constructor() {
    throw new Error(`no process can exist here: ${NO_PROCESSES}`);
  }

  /** @returns {number} */
  id() {
    return 0;
  }

  /** @returns {undefined} */
  readOutput() {
    return undefined;
  }

  /** @returns {never} */
  wait() {
    throw new Error(`no process can exist here: ${NO_PROCESSES}`);
  }

  kill() {}
}

/** Where cut tool outputs are saved in full for the model: a folder of its own, outside the workspace. */
export const SCRATCH_ROOT = '/agent-outputs';

/**
 * The execution environment the component imports, working on `workspace`, with a scratch
 * folder (`SCRATCH_ROOT`, in memory, apart from the workspace) where the agent saves the full
 * text of tool outputs it cut, for `read_file` to page through. A scoped environment (a
 * subagent's) has none.
 * @param {import('./workspace.js').MemoryWorkspace} workspace
 * @param {{cwd?: string, osVersion?: string}} [options] `cwd` scopes the environment to a
 *   directory of the workspace (as the native `Scoped` does for subagents): relative paths
 *   start there and nothing outside it can be reached. `osVersion` replaces the reported
 *   operating-system version.
 * @returns {object} the functions of `agent:core/execution-environment@0.1.0`, camelCased, and `Process`
 */
export function executionEnvironment(workspace, options = {}) {
  const main = environmentOver(workspace, options);
  const within = (root) => (path) => typeof path === 'string' && (path === root || path.startsWith(`${root}/`));
  if (options.cwd !== undefined || within(workspace.root)(SCRATCH_ROOT)) {
    return { ...main, scratchDirectory: () => undefined };
  }
  const scratch = environmentOver(new MemoryWorkspace({}, { root: SCRATCH_ROOT }), {});
  const inScratch = within(SCRATCH_ROOT);
  const routed = (name) => (path, ...rest) => (inScratch(path) ? scratch : main)[name](path, ...rest);
  return {
    ...main,
    readFile: routed('readFile'),
    writeFile: routed('writeFile'),
    fileExists: routed('fileExists'),
    stat: routed('stat'),
    listDirectory: routed('listDirectory'),
    /** @returns {string | undefined} the scratch folder */
    scratchDirectory: () => SCRATCH_ROOT,
  };
}

/** The environment's functions over one MemoryWorkspace. */
function environmentOver(workspace, options) {
  const paths = new Paths(workspace, options.cwd);

  return {
    /** @returns {Uint8Array} the file's bytes, or those of `range` (`{offset, length}` BigInts) */
    readFile: fallible((path, range) => {
      const { shown } = paths.locate(path);
      const stat = workspace.stat(shown);
      if (stat.kind === 'directory') throw failure('is-directory', `${shown} is a directory, not a file`);
      const size = BigInt(stat.size);
      const offset = range === undefined ? 0n : BigInt(range.offset);
      const length = range === undefined ? size : BigInt(range.length);
      if (length > MAX_READ) {
        throw failure('too-large', `${shown} is ${size} bytes; read at most ${MAX_READ} bytes at a time`);
      }
      if (offset >= size) return new Uint8Array(0);
      const data = workspace.readFile(shown);
      const end = offset + length < size ? offset + length : size;
      return data.subarray(Number(offset), Number(end));
    }),

    /** Writes a whole file, creating missing parents. */
    writeFile: fallible((path, contents) => {
      workspace.writeFile(paths.locate(path).shown, contents);
    }),

    /** Deletes a file (not a directory). */
    deleteFile: fallible((path) => {
      const { shown } = paths.locate(path);
      if (workspace.stat(shown).kind === 'directory') {
        throw failure('is-directory', `${shown} is a directory; delete-file removes files only`);
      }
      workspace.deleteFile(shown);
    }),

    /** Moves a file, creating missing parents of the destination and replacing a file there. */
    renameFile: fallible((source, destination) => {
      const from = paths.locate(source).shown;
      const to = paths.locate(destination).shown;
      workspace.renameFile(from, to);
    }),

    /** Creates a directory and its missing parents; succeeds if it exists. */
    createDirectory: fallible((path) => {
      workspace.mkdir(paths.locate(path).shown);
    }),

    /** @returns {boolean} whether anything exists at the path (false when it may not be reached) */
    fileExists(path) {
      try {
        return workspace.exists(paths.locate(path).shown);
      } catch {
        return false;
      }
    },

    /** @returns {{kind: string, size: bigint, modifiedMs: bigint, readonly: boolean}} */
    stat: fallible((path) => {
      const stat = workspace.stat(paths.locate(path).shown);
      return { kind: stat.kind, size: BigInt(stat.size), modifiedMs: millis(stat.modifiedMs), readonly: false };
    }),

    /**
     * Entries under a directory down to `depth` levels (at least 1), in sorted depth-first
     * order, `.git` and ignored paths left out, hidden files kept (as natively).
     * @returns {Array<{path: string, kind: string, size: bigint, depth: number}>}
     */
    listDirectory: fallible((path, depth) => {
      const { shown, relative } = paths.locate(path);
      if (workspace.stat(shown).kind !== 'directory') throw failure('not-a-directory', `${shown} is not a directory`);
      const tree = new Tree(workspace);
      return tree
        .walk(relative, { maxDepth: Math.max(1, depth), skipHidden: false })
        .map(({ node, depth: level }) => ({
          path: relative === '' ? node.path : node.path.slice(relative.length + 1),
          kind: node.kind,
          size: BigInt(node.size),
          depth: level,
        }));
    }),

    /**
     * Lines (or files, or counts) matching a pattern under `options.path`, in sorted
     * depth-first order; hidden, ignored and binary files skipped.
     * @returns {Array<{path: string, lineNumber: number, line: string}>}
     */
    grep: fallible((options) => {
      const { shown, relative } = paths.locate(options.path ?? '.');
      const base = workspace.stat(shown);
      const regex = compilePattern(options);
      const filter = options.globFilter === undefined ? undefined : compileGlob(options.globFilter);
      const limit = options.maxResults || DEFAULT_GREP_LIMIT;
      const files = base.kind === 'file' ? [relative] : new Tree(workspace).files(relative);
      const results = [];
      for (const file of files) {
        if (results.length >= limit) break;
        // The filter sees the path from the workspace root, or the bare file name.
        if (filter && !filter(file) && !filter(file.slice(file.lastIndexOf('/') + 1))) continue;
        searchFile(workspace.readFile(file), regex, options.outputMode ?? 'content', paths.display(file), results, limit);
      }
      return results.slice(0, limit);
    }),

    /**
     * Files under `path` (default: the working directory) whose path relative to it matches
     * the glob, newest first, then by path; hidden and ignored files skipped.
     * @returns {string[]} paths relative to the working directory
     */
    glob: fallible((pattern, path) => {
      const { shown, relative } = paths.locate(path ?? '.');
      const base = workspace.stat(shown);
      const matches = compileGlob(pattern);
      const tree = new Tree(workspace);
      const files = base.kind === 'file' ? [relative] : tree.files(relative);
      const found = [];
      for (const file of files) {
        const inside = base.kind === 'file' ? '' : relative === '' ? file : file.slice(relative.length + 1);
        if (matches(inside)) found.push({ path: paths.display(file), modifiedMs: tree.node(file).modifiedMs });
      }
      found.sort((a, b) => b.modifiedMs - a.modifiedMs || compareCodePoints(a.path, b.path));
      return found.map((file) => file.path);
    }),

    /** @returns {string} the absolute working directory */
    workingDirectory() {
      return paths.workingDirectory;
    },

    /** @returns {string} */
    platform() {
      return 'browser';
    },

    /** @returns {string} */
    osVersion() {
      return options.osVersion ?? (globalThis.navigator?.userAgent || 'browser (in-memory workspace)');
    },

    /** Always fails with `unsupported`: a browser cannot run processes. */
    spawn(request) {
      throw failure('unsupported', `cannot run ${JSON.stringify(request?.command ?? '')}: ${NO_PROCESSES}`);
    },

    Process,
  };
}

/**
 * Wraps an implementation so every failure leaves as an `fs-error` value: the workspace's
 * errors carry their tag as `code` already; anything unexpected becomes `other` rather than
 * trapping the component.
 */
function fallible(operation) {
  return (...args) => {
    try {
      return operation(...args);
    } catch (error) {
      if (error instanceof WorkspaceError) throw failure(error.code, error.message);
      if (error && typeof error === 'object' && !(error instanceof Error) && 'tag' in error) throw error;
      throw failure('other', `the in-memory workspace failed: ${error?.message ?? String(error)}`);
    }
  };
}

/** Milliseconds as the `u64` jco expects (whole, never negative). */
function millis(ms) {
  return BigInt(Math.max(0, Math.trunc(ms)));
}
