// Ignore files (`.ignore`, `.gitignore`) and search globs, translated to picomatch the way the
// native host's `ignore` and `globset` crates read them.

import picomatch from 'picomatch';
import { failure } from './fs-error.js';
import { within } from './paths.js';

// picomatch options. `windows: false` because picomatch otherwise guesses the platform
// from `navigator.platform` and would treat `\` as a separator on Windows browsers; our
// paths are always POSIX. `nonegate` and `noextglob` because a leading `!` and `!(...)`
// are plain text to globset.
const PICOMATCH_BASE = { dot: true, windows: false, nonegate: true, noextglob: true };
/** Ignore-file globs: `*` stays within a path segment (globset `literal_separator(true)`). */
const GITIGNORE_GLOB = PICOMATCH_BASE;
/** Search globs: `*` also crosses `/` (globset `literal_separator(false)`), which picomatch's `bash` mode gives. */
const SEARCH_GLOB = { ...PICOMATCH_BASE, bash: true };

/**
 * The rules of one ignore file, translated the way the `ignore` crate does: a pattern
 * without an inner `/` matches at any depth, a leading `/` anchors it, a trailing `/`
 * restricts it to directories, `!` whitelists, `#` starts a comment.
 * @returns {Array<{matches: (path: string) => boolean, whitelist: boolean, onlyDir: boolean}>}
 */
export function parseIgnoreFile(text) {
  const rules = [];
  for (let line of text.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.startsWith('#')) continue;
    if (!line.endsWith('\\ ')) line = line.trimEnd();
    if (line === '') continue;
    let whitelist = false;
    let anchored = false;
    if (line.startsWith('\\!') || line.startsWith('\\#')) {
      line = line.slice(1);
    } else {
      if (line.startsWith('!')) {
        whitelist = true;
        line = line.slice(1);
      }
      if (line.startsWith('/')) {
        anchored = true;
        line = line.slice(1);
      }
    }
    let onlyDir = false;
    if (line.endsWith('/')) {
      onlyDir = true;
      line = line.slice(0, -1);
      if (line.endsWith('\\')) line = line.slice(0, -1);
    }
    let glob = line;
    if (!anchored && !glob.includes('/') && !glob.startsWith('**/') && glob !== '**') glob = `**/${glob}`;
    // `dir/**` matches what is inside, not `dir` itself.
    if (glob.endsWith('/**')) glob += '/*';
    try {
      rules.push({ matches: picomatch(glob, GITIGNORE_GLOB), whitelist, onlyDir });
    } catch {
      // The ignore crate skips a line it cannot parse and keeps the others.
    }
  }
  return rules;
}

/** The verdict of one ignore file: its last matching rule wins. */
export function matchRules(rules, path, isDir) {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i];
    if ((!rule.onlyDir || isDir) && rule.matches(path)) return rule.whitelist ? 'whitelist' : 'ignore';
  }
  return undefined;
}

/**
 * A glob matcher with the native semantics (globset with `literal_separator(false)`): `*`
 * also crosses `/` (so `*.rs` matches `src/main.rs`), which picomatch's `bash` mode gives;
 * dot files match like any other. Malformed globs are refused as natively.
 * @returns {(path: string) => boolean}
 */
export function compileGlob(pattern) {
  // globset accepts an empty glob, which matches only the empty path; picomatch refuses it.
  if (pattern === '') return (path) => path === '';
  const problem = globSyntaxError(pattern);
  if (problem) {
    throw failure('invalid-input', `invalid glob ${JSON.stringify(pattern)}: error parsing glob '${pattern}': ${problem}`);
  }
  try {
    return picomatch(pattern, SEARCH_GLOB);
  } catch (error) {
    throw failure('invalid-input', `invalid glob ${JSON.stringify(pattern)}: ${error.message}`);
  }
}

/**
 * What globset would reject in a pattern, in its words (picomatch would instead take the
 * text literally and silently match nothing), or undefined.
 */
function globSyntaxError(pattern) {
  let open = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      if (i + 1 >= pattern.length) return "dangling '\\'";
      i++;
    } else if (c === '{') {
      open++;
    } else if (c === '}') {
      if (open === 0) return "unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)";
      open--;
    } else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '!' || pattern[j] === '^') j++;
      if (pattern[j] === ']') j++; // a leading `]` is literal
      for (; j < pattern.length && pattern[j] !== ']'; j++) {
        if (pattern[j] === '-' && pattern[j - 1] !== '[' && j + 1 < pattern.length && pattern[j + 1] !== ']') {
          const [start, end] = [pattern[j - 1], pattern[j + 1]];
          if (end < start) return `invalid range; '${start}' > '${end}'`;
        }
      }
      if (j >= pattern.length) return "unclosed character class; missing ']'";
      i = j;
    }
  }
  return open > 0 ? "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)" : undefined;
}
