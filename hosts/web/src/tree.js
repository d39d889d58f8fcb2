// A snapshot of a MemoryWorkspace as a tree to walk for listings, grep and glob, with the
// ignore rules of each directory applied as the native host's walker applies them.

import { matchRules, parseIgnoreFile } from './ignore-rules.js';
import { parentOf } from './paths.js';

/**
 * The workspace at one moment as a tree to walk, with the ignore rules of its directories.
 * Each directory's children are in sorted order because `entries()` is.
 */
export class Tree {
  #workspace;
  /** Root-relative directory -> its child nodes. */
  #children = new Map([['', []]]);
  /** Root-relative path -> node `{path, name, kind, size, modifiedMs}`. */
  #nodes = new Map();
  /** Root-relative directory -> its parsed ignore files. */
  #rules = new Map();

  constructor(workspace) {
    this.#workspace = workspace;
    for (const entry of workspace.entries()) {
      const slash = entry.path.lastIndexOf('/');
      const node = { ...entry, name: entry.path.slice(slash + 1) };
      this.#nodes.set(entry.path, node);
      this.#children.get(slash < 0 ? '' : entry.path.slice(0, slash)).push(node);
      if (entry.kind === 'directory') this.#children.set(entry.path, []);
    }
  }

  node(path) {
    return this.#nodes.get(path);
  }

  /**
   * The entries under a directory, depth-first in sorted order, as the native walker yields
   * them: ignored entries, `.git`, and with `skipHidden` every name starting with `.` are
   * left out and not descended into.
   * @returns {Array<{node: object, depth: number}>} depth 1 = direct children
   */
  walk(base, { maxDepth = Infinity, skipHidden }) {
    const out = [];
    const visit = (dir, depth) => {
      for (const node of this.#children.get(dir) ?? []) {
        // Listings filter `.git` by name; searches drop it as a hidden entry.
        if (!skipHidden && node.name === '.git') continue;
        const verdict = this.#verdict(node.path, node.kind === 'directory');
        if (verdict === 'ignore') continue;
        // A whitelisting rule (`!.github/`) lets a hidden entry through, as natively.
        if (verdict === undefined && skipHidden && node.name.startsWith('.')) continue;
        out.push({ node, depth });
        if (node.kind === 'directory' && depth < maxDepth) visit(node.path, depth + 1);
      }
    };
    visit(base, 1);
    return out;
  }

  /** The files a search visits under a directory (hidden ones skipped), root-relative. */
  files(base) {
    return this.walk(base, { skipHidden: true })
      .filter(({ node }) => node.kind === 'file')
      .map(({ node }) => node.path);
  }

  /**
   * Whether the ignore files say a path is ignored (`'ignore'`), explicitly kept
   * (`'whitelist'`) or neither (`undefined`), following the `ignore` crate: the deepest
   * directory with a matching rule decides; `.ignore` outranks `.gitignore`, which outranks
   * `.git/info/exclude`; git's files count only inside a repository (a `.git` at or above),
   * and not above the repository's own directory.
   */
  #verdict(path, isDir) {
    const chain = [];
    for (let dir = parentOf(path); dir !== undefined; dir = dir === '' ? undefined : parentOf(dir)) chain.push(dir);
    const inGit = chain.some((dir) => this.#rulesOf(dir).hasGit);
    let fromIgnore;
    let fromGitignore;
    let fromExclude;
    let sawGit = false;
    for (const dir of chain) {
      const rules = this.#rulesOf(dir);
      const inside = dir === '' ? path : path.slice(dir.length + 1);
      fromIgnore ??= matchRules(rules.ignore, inside, isDir);
      if (inGit && !sawGit) {
        fromGitignore ??= matchRules(rules.gitignore, inside, isDir);
        fromExclude ??= matchRules(rules.exclude, inside, isDir);
      }
      sawGit ||= rules.hasGit;
    }
    return fromIgnore ?? fromGitignore ?? fromExclude;
  }

  #rulesOf(dir) {
    let rules = this.#rules.get(dir);
    if (!rules) {
      const join = (name) => (dir === '' ? name : `${dir}/${name}`);
      const read = (name) => (this.#nodes.get(join(name))?.kind === 'file' ? parseIgnoreFile(this.#workspace.readText(join(name))) : []);
      const hasGit = this.#nodes.has(join('.git'));
      rules = {
        ignore: read('.ignore'),
        gitignore: read('.gitignore'),
        exclude: hasGit ? read('.git/info/exclude') : [],
        hasGit,
      };
      this.#rules.set(dir, rules);
    }
    return rules;
  }
}
