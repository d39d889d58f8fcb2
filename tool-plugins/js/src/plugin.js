// The `markdown_outline` tool plugin: exports `agent:core/tool` and reads files only through
// the imported `agent:core/execution-environment`.
import { readFile } from 'agent:core/execution-environment@0.1.0';
import { outlineMarkdown } from './outline.js';

const TOOL_NAME = 'markdown_outline';
const EXTENSIONS = ['.md', '.markdown', '.mdown', '.mkd', '.mdx'];

const PARAMETERS = {
  type: 'object',
  properties: {
    path: {
      type: 'string',
      description: 'Path of a Markdown (.md) file, relative to the workspace.',
    },
    max_depth: {
      type: 'integer',
      minimum: 1,
      maximum: 6,
      description: 'Deepest heading level to list (1-6, default 6).',
    },
  },
  required: ['path'],
  additionalProperties: false,
};

const DESCRIPTION =
  'Outline a Markdown file without reading it whole: its heading tree (ATX `#` and setext ' +
  'headings, ignoring fenced code) with each section\'s line range, and counts of links, ' +
  'images and fenced code blocks by language. Use it to find a section before reading it.';

const FS_ERROR_KINDS = {
  'not-found': 'not found',
  'permission-denied': 'permission denied',
  'is-directory': 'is a directory',
  'not-a-directory': 'not a directory',
  binary: 'binary file',
  'too-large': 'too large',
  'already-exists': 'already exists',
  denied: 'denied',
  'invalid-input': 'invalid input',
  other: 'error',
};

/** A failure reported to the model: becomes the `err` of `execute`. */
class ToolError extends Error {}

/** An `fs-error` variant as the bindings deliver it: `{ tag, val }`, possibly wrapped. */
function fsErrorMessage(error) {
  const value = error && typeof error === 'object' && 'payload' in error ? error.payload : error;
  if (value && typeof value === 'object' && 'tag' in value) {
    return `${FS_ERROR_KINDS[value.tag] || value.tag}: ${value.val}`;
  }
  return `error: ${value instanceof Error ? value.message : String(value)}`;
}

function run(argumentsJson) {
  let args;
  try {
    args = argumentsJson.trim() ? JSON.parse(argumentsJson) : {};
  } catch (error) {
    throw new ToolError(`arguments are not valid JSON: ${error.message}`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new ToolError('arguments must be a JSON object');
  }
  const unknown = Object.keys(args).filter((key) => !(key in PARAMETERS.properties));
  if (unknown.length) throw new ToolError(`unknown argument(s): ${unknown.sort().join(', ')}`);

  const { path } = args;
  if (typeof path !== 'string' || !path.trim()) {
    throw new ToolError('`path` is required and must be a non-empty string');
  }
  let maxDepth = 6;
  if (args.max_depth !== undefined && args.max_depth !== null) {
    maxDepth = args.max_depth;
    if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > 6) {
      throw new ToolError('`max_depth` must be an integer from 1 to 6');
    }
  }
  const lower = path.toLowerCase();
  if (!EXTENSIONS.some((ext) => lower.endsWith(ext))) {
    throw new ToolError(`not a Markdown file (expected ${EXTENSIONS.join(', ')}): ${path}`);
  }

  let bytes;
  try {
    bytes = readFile(path, undefined);
  } catch (error) {
    throw new ToolError(fsErrorMessage(error));
  }
  const text = new TextDecoder('utf-8').decode(bytes);
  return outlineMarkdown(path, text, maxDepth);
}

export const tool = {
  definitions() {
    return [
      {
        name: TOOL_NAME,
        description: DESCRIPTION,
        parametersJson: JSON.stringify(PARAMETERS),
      },
    ];
  },

  execute(name, argumentsJson) {
    if (name !== TOOL_NAME) {
      throw `unknown tool ${JSON.stringify(name)}; this plugin provides ${TOOL_NAME}`;
    }
    try {
      return run(argumentsJson);
    } catch (error) {
      // A thrown string is the `err` case of the result.
      if (error instanceof ToolError) throw error.message;
      throw `internal error in ${TOOL_NAME}: ${error && error.stack ? error.stack : error}`;
    }
  },
};
