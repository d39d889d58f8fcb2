// Sizes, counts and errors as the page words them.

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function lineCount(text) {
  if (!text) return 0;
  return text.replace(/\n$/, '').split('\n').length;
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A readable message for anything thrown, including the component's `{tag, val}` errors. */
export function errorMessage(e) {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object' && 'tag' in e) return e.val ? `${e.tag}: ${e.val}` : String(e.tag);
  return String(e);
}
