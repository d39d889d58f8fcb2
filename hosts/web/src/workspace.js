// An in-memory filesystem for the browser host: the files the agent's tools read and write.
// We keep our own instead of memfs or ZenFS because those emulate Node's fs API and need a
// bundler plus Buffer polyfills; all the agent needs is a map of paths to bytes.
//
// Paths are POSIX. Everything lives under one absolute root directory (default `/workspace`);
// relative paths resolve against it. Error messages use the native host's wording (for
// example `notes.txt does not exist`) and name the path as the caller spelled it, because the
// execution environment hands them to the model unchanged.

import { unzipSync, zipSync } from 'fflate';

/** @typedef {'not-found'|'is-directory'|'not-a-directory'|'already-exists'|'invalid-input'|'denied'} WorkspaceErrorCode */
/** @typedef {{kind: 'file', data: Uint8Array, modifiedMs: number} | {kind: 'directory', modifiedMs: number}} Entry */
/** @typedef {{path: string, kind: 'file'|'directory', size: number, modifiedMs: number}} WorkspaceEntry */
/** @typedef {{kind: 'write'|'delete'|'rename'|'mkdir', path: string, to?: string}} WorkspaceChange */

/** A failed workspace operation. `code` says why; the message names the path. */
export class WorkspaceError extends Error {
  /**
   * @param {WorkspaceErrorCode} code why it failed
   * @param {string} message what failed, naming the path
   */
  constructor(code, message) {
    super(message);
    this.name = 'WorkspaceError';
    /** @type {WorkspaceErrorCode} */
    this.code = code;
  }
}

const encoder = new TextEncoder();
// `ignoreBOM: true` keeps a byte-order mark in the text, so text round-trips byte for byte.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lossyDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

// The range of dates a zip entry can carry (DOS time); fflate throws outside it.
const ZIP_EPOCH_MS = Date.UTC(1980, 0, 2);
const ZIP_END_MS = Date.UTC(2099, 11, 31);

/**
 * Compares strings by Unicode code point, which is the byte order of their UTF-8 (how the
 * native host sorts paths); JavaScript's `<` compares UTF-16 units, which differs for
 * characters beyond U+FFFF.
 * @param {string} a
 * @param {string} b
 * @returns {number} negative, zero or positive
 */
export function compareCodePoints(a, b) {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.codePointAt(i) - b.codePointAt(i);
  }
  return a.length - b.length;
}

/**
 * Compares relative paths segment by segment, so a directory comes right before its own
 * contents (`a`, `a/x`, `a-b`): the order of a sorted depth-first walk, as the native
 * listing produces.
 * @param {string} a
 * @param {string} b
 * @returns {number} negative, zero or positive
 */
export function comparePaths(a, b) {
  const left = a.split('/');
  const right = b.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = compareCodePoints(left[i], right[i]);
    if (order !== 0) return order;
  }
  return left.length - right.length;
}

/**
 * An absolute path with `.`, `..` and repeated slashes folded away (lexically: there are no
 * symbolic links here). `..` at the top stays at `/`, like the kernel does.
 * @param {string} absolute
 * @returns {string}
 */
function normalise(absolute) {
  const parts = [];
  for (const part of absolute.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** The directory holding an absolute path (`/` for `/x`). */
function parentOf(absolute) {
  const slash = absolute.lastIndexOf('/');
  return slash <= 0 ? '/' : absolute.slice(0, slash);
}

/** Whether bytes read as text: valid UTF-8 without NUL bytes. */
function isText(bytes) {
  if (bytes.includes(0)) return false;
  try {
    strictDecoder.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Seed or written contents as bytes the workspace owns (never the caller's array). */
function toBytes(contents, path) {
  if (typeof contents === 'string') return encoder.encode(contents);
  if (contents instanceof Uint8Array) return contents.slice();
  throw new WorkspaceError(
    'invalid-input',
    `the contents of ${path} must be a string or a Uint8Array, not ${contents === null ? 'null' : typeof contents}`,
  );
}

/** An in-memory filesystem under one absolute root directory. */
export class MemoryWorkspace {
  /** @type {string} */
  #root;
  /** Normalised absolute path -> entry; the root itself is always present. @type {Map<string, Entry>} */
  #entries = new Map();
  /** @type {Set<(change: WorkspaceChange) => void>} */
  #listeners = new Set();
  /** @type {() => number} */
  #now;

  /**
   * A workspace seeded with files.
   * @param {Record<string, string | Uint8Array | null>} [files] paths relative to the root
   *   mapped to their contents; a key ending in `/` (value `null`) makes a directory
   * @param {{root?: string, now?: () => number}} [options] the absolute root directory, and
   *   the clock giving modification times in milliseconds since the epoch
   */
  constructor(files = {}, { root = '/workspace', now = () => Date.now() } = {}) {
    if (typeof root !== 'string' || !root.startsWith('/')) {
      throw new WorkspaceError('invalid-input', `the workspace root must be an absolute path, not ${JSON.stringify(root)}`);
    }
    this.#root = normalise(root);
    this.#now = now;
    this.#entries.set(this.#root, { kind: 'directory', modifiedMs: now() });
    for (const [path, contents] of Object.entries(files ?? {})) {
      if (path.endsWith('/')) {
        if (contents != null) {
          throw new WorkspaceError('invalid-input', `${path} names a directory (it ends with /); its value must be null`);
        }
        this.mkdir(path);
      } else {
        this.writeFile(path, contents);
      }
    }
  }

  /**
   * The same as the constructor: a workspace seeded from `toObject()`'s shape.
   * @param {Record<string, string | Uint8Array | null>} files
   * @param {{root?: string, now?: () => number}} [options]
   * @returns {MemoryWorkspace}
   */
  static fromObject(files, options) {
    return new MemoryWorkspace(files, options);
  }

  /**
   * A workspace holding a zip archive's files (entries ending in `/` are directories).
   * @param {Uint8Array} bytes the archive
   * @param {{root?: string, now?: () => number}} [options]
   * @returns {MemoryWorkspace}
   */
  static fromZip(bytes, options) {
    let unzipped;
    try {
      unzipped = unzipSync(bytes);
    } catch (error) {
      throw new WorkspaceError('invalid-input', `not a readable zip archive: ${error.message}`);
    }
    const files = {};
    for (const [name, data] of Object.entries(unzipped)) files[name] = name.endsWith('/') ? null : data;
    return new MemoryWorkspace(files, options);
  }

  /**
   * The workspace as a zip archive: every file, plus an entry for each empty directory.
   * @returns {Uint8Array}
   */
  toZip() {
    const archive = {};
    for (const entry of this.entries()) {
      const options = zipDate(entry.modifiedMs);
      if (entry.kind === 'file') {
        archive[entry.path] = [this.#entries.get(this.#absolute(entry.path)).data, options];
      } else if (this.#isEmptyDirectory(this.#absolute(entry.path))) {
        // fflate writes a nested object as a directory entry `path/`.
        archive[entry.path] = [{}, options];
      }
    }
    return zipSync(archive);
  }

  /**
   * The workspace as a plain object: text files (valid UTF-8 without NUL) as strings, other
   * files as Uint8Array, empty directories as `'dir/': null`. Feeds the constructor back.
   * @returns {Record<string, string | Uint8Array | null>}
   */
  toObject() {
    const files = {};
    for (const entry of this.entries()) {
      const absolute = this.#absolute(entry.path);
      if (entry.kind === 'file') {
        const { data } = this.#entries.get(absolute);
        files[entry.path] = isText(data) ? strictDecoder.decode(data) : data.slice();
      } else if (this.#isEmptyDirectory(absolute)) {
        files[`${entry.path}/`] = null;
      }
    }
    return files;
  }

  /** The absolute root directory every relative path resolves against. */
  get root() {
    return this.#root;
  }

  /**
   * The normalised absolute path a path names: relative paths start at the root, `.` and
   * `..` are folded. A path outside the root resolves too; operations refuse it.
   * @param {string} path
   * @returns {string}
   */
  resolve(path) {
    if (typeof path !== 'string') {
      throw new WorkspaceError('invalid-input', `a path must be a string, not ${path === null ? 'null' : typeof path}`);
    }
    return normalise(path.startsWith('/') ? path : `${this.#root}/${path}`);
  }

  /**
   * A file's contents (a copy: changing it does not change the file).
   * @param {string} path
   * @returns {Uint8Array}
   */
  readFile(path) {
    return this.#file(path).data.slice();
  }

  /**
   * A file's contents decoded as UTF-8 (invalid sequences become U+FFFD).
   * @param {string} path
   * @returns {string}
   */
  readText(path) {
    return lossyDecoder.decode(this.#file(path).data);
  }

  /**
   * Writes a whole file, replacing any content and creating missing parent directories.
   * @param {string} path
   * @param {string | Uint8Array} contents text (written as UTF-8) or bytes
   */
  writeFile(path, contents) {
    const absolute = this.#locate(path);
    const data = toBytes(contents, path);
    if (this.#entries.get(absolute)?.kind === 'directory') {
      throw new WorkspaceError('is-directory', `${path} is a directory`);
    }
    const changes = this.#createParents(absolute, path);
    this.#entries.set(absolute, { kind: 'file', data, modifiedMs: this.#now() });
    this.#touch(parentOf(absolute));
    this.#emit([...changes, { kind: 'write', path: this.#relative(absolute) }]);
  }

  /**
   * Deletes a file (not a directory).
   * @param {string} path
   */
  deleteFile(path) {
    const absolute = this.#locate(path);
    const entry = this.#existing(absolute, path);
    if (entry.kind === 'directory') {
      throw new WorkspaceError('is-directory', `${path} is a directory; only files can be deleted`);
    }
    this.#entries.delete(absolute);
    this.#touch(parentOf(absolute));
    this.#emit([{ kind: 'delete', path: this.#relative(absolute) }]);
  }

  /**
   * Moves a file or a directory (with everything in it), creating missing parent
   * directories of the destination and replacing an existing destination file (or empty
   * directory, when moving a directory), as `rename(2)` does.
   * @param {string} from
   * @param {string} to
   */
  renameFile(from, to) {
    const source = this.#locate(from);
    const target = this.#locate(to);
    const entry = this.#existing(source, from);
    if (source === target) return;
    if (source === this.#root) throw new WorkspaceError('invalid-input', `${from} is the workspace root; it cannot be moved`);
    if (target.startsWith(`${source}/`)) {
      throw new WorkspaceError('invalid-input', `cannot move ${from} into itself (${to})`);
    }
    this.#checkRenameTarget(entry, target, to);
    const changes = this.#createParents(target, to);
    const moved = [...this.#entries].filter(([path]) => path === source || path.startsWith(`${source}/`));
    for (const [path] of moved) this.#entries.delete(path);
    this.#entries.delete(target); // an existing file or empty directory is replaced
    for (const [path, value] of moved) this.#entries.set(target + path.slice(source.length), value);
    this.#touch(parentOf(source));
    this.#touch(parentOf(target));
    this.#emit([...changes, { kind: 'rename', path: this.#relative(source), to: this.#relative(target) }]);
  }

  /**
   * Creates a directory and its missing parents; succeeds if it already exists.
   * @param {string} path
   */
  mkdir(path) {
    const absolute = this.#locate(path);
    const existing = this.#entries.get(absolute);
    if (existing?.kind === 'directory') return;
    if (existing) throw new WorkspaceError('already-exists', `${path} already exists`);
    const changes = this.#createParents(absolute, path);
    this.#entries.set(absolute, { kind: 'directory', modifiedMs: this.#now() });
    this.#touch(parentOf(absolute));
    this.#emit([...changes, { kind: 'mkdir', path: this.#relative(absolute) }]);
  }

  /**
   * Whether anything exists at the path (false for paths outside the root).
   * @param {string} path
   * @returns {boolean}
   */
  exists(path) {
    try {
      return this.#entries.has(this.#locate(path));
    } catch {
      return false;
    }
  }

  /**
   * Metadata of a path.
   * @param {string} path
   * @returns {{kind: 'file'|'directory', size: number, modifiedMs: number}} size is 0 for
   *   directories
   */
  stat(path) {
    const entry = this.#existing(this.#locate(path), path);
    return { kind: entry.kind, size: entry.kind === 'file' ? entry.data.length : 0, modifiedMs: entry.modifiedMs };
  }

  /**
   * Every file and directory below the root, with paths relative to it, sorted segment by
   * segment (a directory right before its contents).
   * @returns {WorkspaceEntry[]}
   */
  entries() {
    const list = [];
    for (const [absolute, entry] of this.#entries) {
      if (absolute === this.#root) continue;
      list.push({
        path: this.#relative(absolute),
        kind: entry.kind,
        size: entry.kind === 'file' ? entry.data.length : 0,
        modifiedMs: entry.modifiedMs,
      });
    }
    return list.sort((a, b) => comparePaths(a.path, b.path));
  }

  /**
   * The files of `entries()`.
   * @returns {WorkspaceEntry[]}
   */
  files() {
    return this.entries().filter((entry) => entry.kind === 'file');
  }

  /**
   * Calls `listener` after every change (paths relative to the root); for a UI file tree.
   * Creating missing parent directories reports a `mkdir` for each before the change itself.
   * @param {(change: WorkspaceChange) => void} listener
   * @returns {() => void} unsubscribes
   */
  onChange(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The absolute path of a path, refused when outside the root or malformed. */
  #locate(path) {
    const absolute = this.resolve(path);
    if (path.includes('\0')) {
      throw new WorkspaceError('invalid-input', `the path ${JSON.stringify(path)} contains a NUL byte`);
    }
    if (absolute !== this.#root && !absolute.startsWith(this.#root === '/' ? '/' : `${this.#root}/`)) {
      throw new WorkspaceError('denied', `${path} is outside the workspace ${this.#root}`);
    }
    return absolute;
  }

  /** The root-relative form of an absolute path inside the root (`''` for the root). */
  #relative(absolute) {
    if (absolute === this.#root) return '';
    return absolute.slice(this.#root === '/' ? 1 : this.#root.length + 1);
  }

  /** The absolute form of a root-relative path. */
  #absolute(relative) {
    return this.#root === '/' ? `/${relative}` : `${this.#root}/${relative}`;
  }

  /** The entry at an absolute path, or the error saying why there is none. */
  #existing(absolute, path) {
    const entry = this.#entries.get(absolute);
    if (entry) return entry;
    // Like the kernel (ENOTDIR): a file where a directory should be is its own error.
    for (let dir = parentOf(absolute); dir !== this.#root && dir !== '/'; dir = parentOf(dir)) {
      if (this.#entries.get(dir)?.kind === 'file') {
        throw new WorkspaceError('not-a-directory', `a parent of ${path} is not a directory`);
      }
    }
    throw new WorkspaceError('not-found', `${path} does not exist`);
  }

  /** The file at a path, or the error saying why it is not one. */
  #file(path) {
    const entry = this.#existing(this.#locate(path), path);
    if (entry.kind === 'directory') throw new WorkspaceError('is-directory', `${path} is a directory, not a file`);
    return entry;
  }

  /** Refuses destinations `rename(2)` refuses: a directory onto a file or non-empty directory, a file onto a directory. */
  #checkRenameTarget(entry, target, to) {
    const existing = this.#entries.get(target);
    if (!existing) return;
    if (entry.kind === 'file' && existing.kind === 'directory') {
      throw new WorkspaceError('is-directory', `${to} is a directory`);
    }
    if (entry.kind === 'directory' && existing.kind === 'file') {
      throw new WorkspaceError('not-a-directory', `${to} is not a directory`);
    }
    if (entry.kind === 'directory' && !this.#isEmptyDirectory(target)) {
      throw new WorkspaceError('already-exists', `${to} already exists and is not empty`);
    }
  }

  /**
   * Creates the missing directories above an absolute path. Checks the whole chain first,
   * so a file in the way fails the operation before anything changes.
   * @returns {WorkspaceChange[]} a `mkdir` per directory created, outermost first
   */
  #createParents(absolute, path) {
    const missing = [];
    for (let dir = parentOf(absolute); dir !== this.#root && dir !== '/'; dir = parentOf(dir)) {
      const entry = this.#entries.get(dir);
      if (entry?.kind === 'file') throw new WorkspaceError('not-a-directory', `a parent of ${path} is not a directory`);
      if (!entry) missing.unshift(dir);
    }
    for (const dir of missing) {
      this.#entries.set(dir, { kind: 'directory', modifiedMs: this.#now() });
      this.#touch(parentOf(dir));
    }
    return missing.map((dir) => ({ kind: 'mkdir', path: this.#relative(dir) }));
  }

  /** A directory's modification time moves when an entry in it is added or removed, as on disk. */
  #touch(directory) {
    const entry = this.#entries.get(directory);
    if (entry) entry.modifiedMs = this.#now();
  }

  #isEmptyDirectory(absolute) {
    const prefix = `${absolute}/`;
    for (const path of this.#entries.keys()) if (path.startsWith(prefix)) return false;
    return true;
  }

  /** Tells the listeners; one that throws is reported but cannot undo or break the change. */
  #emit(changes) {
    for (const change of changes) {
      for (const listener of [...this.#listeners]) {
        try {
          listener(change);
        } catch (error) {
          if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
          else console.error('a workspace change listener failed:', error);
        }
      }
    }
  }
}

/** fflate's per-entry options carrying a modification time, when a zip can hold it. */
function zipDate(modifiedMs) {
  return modifiedMs >= ZIP_EPOCH_MS && modifiedMs <= ZIP_END_MS ? { mtime: new Date(modifiedMs) } : {};
}
