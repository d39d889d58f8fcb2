// grep over in-memory files: Rust `regex` patterns translated to JavaScript, and the native
// searcher's line-by-line behaviour (binary detection, limits, output modes).

import { failure } from './fs-error.js';

/**
 * A file with a NUL byte this early is binary and not searched. The native searcher
 * (grep-searcher, `BinaryDetection::quit(0)`) reads files in 64 KiB buffers and quits at the
 * first buffer holding a NUL, so its effective window is the first 64 KiB, not 8 KiB.
 */
const BINARY_WINDOW = 64 * 1024;

const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lossyDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

// Rust's `\w` is Unicode-aware; JavaScript's is ASCII even with the `u` flag.
const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const WORD_START = `(?<![${WORD}])(?=[${WORD}])`;
const WORD_END = `(?<=[${WORD}])(?![${WORD}])`;
const POSIX_CLASSES = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};
/** Characters JavaScript lets `\` escape in `u` mode outside a class. */
const JS_SYNTAX = new Set('^$\\.*+?()[]{}|/');

/**
 * The JavaScript RegExp for a grep request. The pattern is Rust `regex` syntax; the common
 * differences are translated (Unicode `\w`, `\d`, `\s`, `\b`; `\A`, `\z`, `\<`, `\>`;
 * `(?P<name>`; POSIX classes; leading `(?i)`/`(?s)`/`(?m)`; escaped punctuation; a lone
 * `]` or `}`), and what Rust rejects (look-around, backreferences) is rejected here too.
 * @returns {RegExp}
 */
export function compilePattern({ pattern, caseInsensitive, fixedStrings }) {
  const invalid = (message) => failure('invalid-input', `invalid pattern ${JSON.stringify(pattern)}: ${message}`);
  let source;
  let flags = caseInsensitive ? 'iu' : 'u';
  if (fixedStrings) {
    source = pattern.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  } else {
    const translated = translateRustRegex(pattern);
    if (translated.error) throw invalid(`regex parse error: ${translated.error}`);
    source = translated.source;
    if (translated.flags.includes('i') && !flags.includes('i')) flags += 'i';
    if (translated.flags.includes('s')) flags += 's';
  }
  try {
    return new RegExp(source, flags);
  } catch (error) {
    throw invalid(error.message);
  }
}

/**
 * Rewrites a Rust regex as JavaScript source. Each line is matched on its own, so `(?m)`
 * changes nothing and is dropped; `.` becomes `[^\n]` because JavaScript's `.` also stops
 * at `\r`, which Rust's only does at `\n` (CRLF files keep `\r` on each line).
 * @returns {{source: string, flags: string, error?: string}}
 */
function translateRustRegex(pattern) {
  let i = 0;
  let flags = '';
  const leading = /^\(\?([imsU-]*)\)/.exec(pattern);
  if (leading && /^[ims]*$/.test(leading[1])) {
    flags = leading[1];
    i = leading[0].length;
  }
  const dotAll = flags.includes('s');
  let out = '';
  let inClass = false;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      const escape = translateEscape(pattern, i, inClass);
      if (escape.error) return { source: '', flags, error: escape.error };
      out += escape.source;
      i = escape.end;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        inClass = false;
        out += ']';
        i++;
      } else if (c === '[') {
        const posix = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
        if (!posix || !(posix[2] in POSIX_CLASSES)) return { source: '', flags, error: 'nested character classes are not supported in the browser' };
        if (posix[1]) return { source: '', flags, error: `negated POSIX class [:^${posix[2]}:] is not supported in the browser` };
        out += POSIX_CLASSES[posix[2]];
        i += posix[0].length;
      } else if ((c === '&' || c === '~' || c === '-') && pattern[i + 1] === c) {
        return { source: '', flags, error: `character class set operations (${c}${c}) are not supported in the browser` };
      } else {
        out += c;
        i++;
      }
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += '[';
      i++;
      if (pattern[i] === '^') {
        out += '^';
        i++;
      }
      if (pattern[i] === ']') {
        out += '\\]'; // a leading `]` is literal in Rust; `[]` is an empty class in JavaScript
        i++;
      }
    } else if (c === '(' && pattern.startsWith('(?P<', i)) {
      out += '(?<';
      i += 4;
    } else if (c === '(' && /^\(\?<?[=!]/.test(pattern.slice(i))) {
      return { source: '', flags, error: 'look-around, including look-ahead and look-behind, is not supported' };
    } else if (c === '{') {
      // A counted repetition is copied whole; any other `{` is left for the parser to judge.
      const repetition = /^\{\d*(,\d*)?\}/.exec(pattern.slice(i));
      out += repetition ? repetition[0] : '{';
      i += repetition ? repetition[0].length : 1;
    } else if (c === '}' || c === ']') {
      out += `\\${c}`; // literal in Rust, a syntax error in JavaScript's `u` mode
      i++;
    } else if (c === '.' && !dotAll) {
      out += '[^\\n]';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return { source: out, flags };
}

/** One `\` escape of a Rust regex as JavaScript source; `end` is the index after it. */
function translateEscape(pattern, i, inClass) {
  const c = pattern[i + 1];
  const at = (source, length = 2) => ({ source, end: i + length });
  if (c === undefined) return { error: 'incomplete escape sequence, reached end of pattern prematurely' };
  switch (c) {
    case 'd':
      return at('\\p{Nd}');
    case 'D':
      return at('\\P{Nd}');
    case 's':
      return at('\\p{White_Space}');
    case 'S':
      return at('\\P{White_Space}');
    case 'w':
      return at(inClass ? WORD : `[${WORD}]`);
    case 'W':
      // A negated class cannot sit inside another without the `v` flag: ASCII `\W` there.
      return at(inClass ? '\\W' : `[^${WORD}]`);
    case 'a':
      return at('\\x07');
    case 'A':
      return at('(?<![\\s\\S])');
    case 'z':
      return at('(?![\\s\\S])');
    case '<':
      return at(WORD_START);
    case '>':
      return at(WORD_END);
    case 'U': {
      const hex = /^[0-9A-Fa-f]{8}/.exec(pattern.slice(i + 2));
      return hex ? at(`\\u{${hex[0]}}`, 10) : at('\\U');
    }
    case 'x': {
      const braced = /^\{([0-9A-Fa-f]+)\}/.exec(pattern.slice(i + 2));
      return braced ? at(`\\u{${braced[1]}}`, 2 + braced[0].length) : at('\\x');
    }
    case 'p':
    case 'P':
    case 'u': {
      // Copied whole, or the loop would take their closing `}` for a literal one.
      const braced = /^\{[^}]*\}/.exec(pattern.slice(i + 2));
      if (braced) return at(c === 'u' ? `\\u${braced[0]}` : unicodeProperty(c, braced[0].slice(1, -1)), 2 + braced[0].length);
      // `\pL` is Rust shorthand for `\p{L}`.
      const letter = pattern[i + 2];
      return c !== 'u' && letter !== undefined ? at(`\\${c}{${letter}}`, 3) : at(`\\${c}`);
    }
    case 'b': {
      if (inClass) return at('\\b');
      const special = /^\{(start|end)\}/.exec(pattern.slice(i + 2));
      if (special) return at(special[1] === 'start' ? WORD_START : WORD_END, 2 + special[0].length);
      return at(`(?:${WORD_START}|${WORD_END})`);
    }
    case 'B':
      return at(inClass ? '\\B' : `(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`);
    default:
      if (c >= '1' && c <= '9') return { error: 'backreferences are not supported' };
      // Rust lets any ASCII punctuation be escaped; JavaScript's `u` mode only its own syntax
      // characters, so the rest are written as hex escapes.
      if (/[!-/:-@[-`{-~]/.test(c) && !JS_SYNTAX.has(c) && !(inClass && c === '-')) {
        return at(`\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
      }
      return at(`\\${c}`);
  }
}

/**
 * A `\p{...}` class. Rust takes a bare script name (`\p{Greek}`) where JavaScript needs
 * `\p{Script=Greek}`.
 */
function unicodeProperty(p, name) {
  try {
    new RegExp(`\\p{${name}}`, 'u');
    return `\\${p}{${name}}`;
  } catch {
    return `\\${p}{Script=${name}}`;
  }
}

/**
 * Searches one file line by line as the native searcher does and records what the output
 * mode asks for into `results` (at most `limit` in content mode).
 */
export function searchFile(bytes, regex, mode, path, results, limit) {
  const head = bytes.subarray(0, BINARY_WINDOW);
  if (head.includes(0)) return;
  // A NUL further on ends the search there (the native searcher stops at the buffer holding
  // it; this stops at the line holding it, which can report a few more lines).
  const nul = bytes.indexOf(0, BINARY_WINDOW);
  const searched = nul < 0 ? bytes : bytes.subarray(0, bytes.lastIndexOf(10, nul) + 1);
  let count = 0;
  for (const [index, line] of lines(searched).entries()) {
    if (!regex.test(line.text)) continue;
    // The native UTF-8 sink gives up on a file at a matching line that is not UTF-8.
    if (!line.valid) break;
    count++;
    if (mode === 'content') {
      results.push({ path, lineNumber: index + 1, line: line.text.replace(/[\r\n]+$/, '') });
      if (results.length >= limit) break;
    } else if (mode === 'files-with-matches') {
      break;
    }
  }
  if (count === 0 || mode === 'content') return;
  results.push({ path, lineNumber: mode === 'count' ? count : 0, line: '' });
}

/**
 * A file's lines without their `\n` (a `\r` stays, as natively), each decoded as UTF-8 and
 * marked whether it was valid. A final line without terminator counts; an empty tail does not.
 * @returns {Array<{text: string, valid: boolean}>}
 */
function lines(bytes) {
  let text;
  try {
    text = strictDecoder.decode(bytes);
  } catch {
    return invalidUtf8Lines(bytes);
  }
  const split = text.split('\n');
  if (split[split.length - 1] === '') split.pop();
  return split.map((line) => ({ text: line, valid: true }));
}

/** The slow path of `lines` for files that are not valid UTF-8 throughout. */
function invalidUtf8Lines(bytes) {
  const out = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    const raw = bytes.subarray(start, end);
    let valid = true;
    try {
      strictDecoder.decode(raw);
    } catch {
      valid = false;
    }
    out.push({ text: lossyDecoder.decode(raw), valid });
    start = end + 1;
  }
  return out;
}
