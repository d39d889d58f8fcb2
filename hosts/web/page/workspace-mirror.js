// The workspace's contents as last seen, so that each change the agent makes can be shown as a
// diff: the workspace itself only tells what changed, not what was there before.

const MAX_DIFFED_BYTES = 1024 * 1024;

/** The contents of a path that does not exist (before a file is created, after it is deleted). */
export const ABSENT = Symbol('absent');

/** What a file holds, for diffing and viewing: its text, or a marker when it is binary or large. */
export function contentOf(workspace, path) {
  let bytes;
  try {
    bytes = workspace.readFile(path);
  } catch {
    return ABSENT;
  }
  if (bytes.length > MAX_DIFFED_BYTES) return { large: true, size: bytes.length };
  if (bytes.includes(0)) return { binary: true, size: bytes.length };
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { binary: true, size: bytes.length };
  }
}

/** path -> text, or {binary|large, size}: one workspace as last seen, to diff against. */
export function createWorkspaceMirror(workspace) {
  const mirror = new Map();
  for (const entry of workspace.files()) mirror.set(entry.path, contentOf(workspace, entry.path));

  /**
   * Turns one workspace change into per-file records `{path, from, before, after}` (reading the
   * contents now, synchronously, while the tool that made the change is still running).
   */
  function capture(change) {
    const records = [];
    const take = (path) => (mirror.has(path) ? mirror.get(path) : ABSENT);
    if (change.kind === 'write') {
      const before = take(change.path);
      const after = contentOf(workspace, change.path);
      mirror.set(change.path, after);
      records.push({ path: change.path, from: change.path, before, after });
    } else if (change.kind === 'delete') {
      records.push({ path: change.path, from: change.path, before: take(change.path), after: ABSENT });
      mirror.delete(change.path);
    } else if (change.kind === 'rename' && change.to !== undefined) {
      const moved = [...mirror.keys()].filter((p) => p === change.path || p.startsWith(`${change.path}/`));
      for (const from of moved) {
        const to = change.to + from.slice(change.path.length);
        const before = take(from);
        mirror.delete(from);
        const after = contentOf(workspace, to);
        mirror.set(to, after);
        records.push({ path: to, from, before, after, renamed: true });
      }
    }
    return records;
  }

  return { capture };
}
