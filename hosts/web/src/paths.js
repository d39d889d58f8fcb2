// Where the model's paths lead inside a MemoryWorkspace, and the refusals of paths that leave
// it (or the directory a subagent is scoped to), worded as the native host words them.

import { WorkspaceError } from './workspace.js';
import { failure } from './fs-error.js';

/** Whether a normalised absolute path is `dir` or inside it. */
export function within(absolute, dir) {
  return absolute === dir || absolute.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/**
 * Where the model's paths lead, and the refusals of paths that leave the workspace (or the
 * scoped directory), worded as natively.
 */
export class Paths {
  /** The scoped directory relative to the root, `''` when not scoped. */
  #prefix;
  #workspace;

  constructor(workspace, cwd) {
    this.#workspace = workspace;
    this.#prefix = scopePrefix(workspace, cwd);
    /** The absolute working directory. */
    this.workingDirectory = this.#prefix === '' ? workspace.root : workspace.resolve(this.#prefix);
  }

  /**
   * The path as the errors name it (`shown`) and its normalised form relative to the root.
   * Scoped, a relative path is prefixed with the scope, as the native `Scoped` passes it on
   * (so its errors name `sub/x`, not `x`).
   * @param {string} path
   * @returns {{shown: string, relative: string}}
   */
  locate(path) {
    const shown = this.#prefix !== '' && !path.startsWith('/') ? `${this.#prefix}/${path}` : path;
    if (this.#prefix !== '') {
      const absolute = this.#workspace.resolve(shown);
      if (!within(absolute, this.workingDirectory)) {
        throw failure('denied', `${shown}: ${absolute} is outside the allowed directories (${this.workingDirectory})`);
      }
    }
    return { shown, relative: this.#beneathRoot(shown) };
  }

  /** A root-relative path as search results show it: relative to the working directory. */
  display(relative) {
    return this.#prefix === '' ? relative : relative.slice(this.#prefix.length + 1);
  }

  /**
   * The root-relative form of a path, refusing what the native environment refuses. Like
   * cap-std there, a `..` that climbs above the root is refused even if the path comes back
   * in later (`../workspace/x`).
   */
  #beneathRoot(path) {
    if (path === '') throw failure('invalid-input', 'the path is empty');
    if (path.includes('\0')) throw failure('invalid-input', `the path ${JSON.stringify(path)} contains a NUL byte`);
    const root = this.#workspace.root;
    let parts = path.split('/').filter((part) => part !== '' && part !== '.');
    if (path.startsWith('/')) {
      const rootParts = root.split('/').filter(Boolean);
      if (rootParts.some((part, i) => parts[i] !== part)) {
        throw failure('denied', `${path} is outside the workspace; this environment may only use ${root}`);
      }
      parts = parts.slice(rootParts.length);
    }
    const inside = [];
    for (const part of parts) {
      if (part !== '..') inside.push(part);
      else if (inside.pop() === undefined) {
        throw failure(
          'denied',
          `${path} leads outside the workspace (through \`..\` or a symbolic link); this environment may only use ${root}`,
        );
      }
    }
    return inside.join('/');
  }
}

/** The root-relative directory a `cwd` option names (`''` for the root), checked to exist. */
export function scopePrefix(workspace, cwd) {
  if (cwd === undefined || cwd === null || cwd === '') return '';
  const absolute = workspace.resolve(cwd);
  if (!within(absolute, workspace.root)) {
    throw new WorkspaceError('denied', `the working directory ${cwd} is outside the workspace ${workspace.root}`);
  }
  if (workspace.stat(cwd).kind !== 'directory') throw new WorkspaceError('not-a-directory', `${cwd} is not a directory`);
  return absolute === workspace.root ? '' : absolute.slice(workspace.root === '/' ? 1 : workspace.root.length + 1);
}

/** The directory holding a root-relative path (`''` at the top). */
export function parentOf(path) {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}
