// Checkpoints of an in-memory workspace: every file recorded before each input, so the
// files can be put back as they were before any input (the native host's `agent-host undo`,
// over a MemoryWorkspace). The record is complete: nothing is ignored or too large, so a
// restore removes every file created since.

/** The input's first non-empty line, at most 60 characters. */
function label(input) {
  const line = String(input).split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  const chars = [...line];
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}...` : line;
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

/** What the model is told about a restore with the next input (the native host's words). */
function restoredNote({ input, restored, removed }) {
  const files = [...restored, ...removed];
  const shown = 20;
  // Quoted and escaped: the names are the model's.
  let listed = files.length === 0 ? 'no file differed' : files.slice(0, shown).map((f) => JSON.stringify(f)).join(', ');
  if (files.length > shown) listed += ` and ${files.length - shown} more`;
  return (
    `[The user restored the workspace's files to how they were before input ${input} (${listed}). ` +
    'Changes made to them since are gone; read files again before editing them.]'
  );
}

export class Checkpoints {
  #workspace;
  /** @type {{input: number, label: string, createdMs: number, files: Map<string, Uint8Array>}[]} */
  #list = [];
  #nextInput = 1;
  /** @type {string | undefined} */
  #note;

  /** @param {import('./workspace.js').MemoryWorkspace} workspace */
  constructor(workspace) {
    this.#workspace = workspace;
  }

  /** Records the workspace before an input; an unchanged file shares the previous copy. */
  record(input) {
    const previous = this.#list.at(-1)?.files;
    const files = new Map();
    for (const { path } of this.#workspace.files()) {
      const data = this.#workspace.readFile(path);
      const earlier = previous?.get(path);
      files.set(path, earlier && sameBytes(earlier, data) ? earlier : data);
    }
    this.#list.push({ input: this.#nextInput, label: label(input), createdMs: Date.now(), files });
    this.#nextInput += 1;
  }

  /** The checkpoints, oldest first: `{input, label, createdMs, files}` (files: a count). */
  list() {
    return this.#list.map(({ input, label: text, createdMs, files }) => ({ input, label: text, createdMs, files: files.size }));
  }

  /**
   * Puts the files back as they were before `input` (`undefined`: the latest checkpoint);
   * that checkpoint and later ones are used up.
   * @returns {{input: number, restored: string[], removed: string[], failed: {path: string, reason: string}[]}}
   */
  restore(input) {
    const position = input === undefined ? this.#list.length - 1 : this.#list.findIndex((c) => c.input === input);
    if (position < 0) {
      const available = this.#list.map((c) => c.input);
      const which = input === undefined ? 'there is no checkpoint to go back to' : `there is no checkpoint before input ${input}`;
      throw new Error(
        available.length === 0
          ? `${which} (none recorded, or all used by earlier undos)`
          : `${which}; checkpoints exist before inputs ${available.join(', ')}`,
      );
    }
    const checkpoint = this.#list[position];
    const result = { input: checkpoint.input, restored: [], removed: [], failed: [] };
    for (const [path, data] of checkpoint.files) {
      let current;
      try {
        current = this.#workspace.readFile(path);
      } catch {
        current = undefined;
      }
      if (current && sameBytes(current, data)) continue;
      try {
        this.#workspace.writeFile(path, data.slice());
        result.restored.push(path);
      } catch (error) {
        result.failed.push({ path, reason: error.message });
      }
    }
    for (const { path } of this.#workspace.files()) {
      if (checkpoint.files.has(path)) continue;
      this.#workspace.deleteFile(path);
      result.removed.push(path);
    }
    this.#list.length = position;
    const note = restoredNote(result);
    this.#note = this.#note ? `${this.#note}\n${note}` : note;
    return result;
  }

  /** What the model should be told about restores since the last input (taken once). */
  takeNote() {
    const note = this.#note;
    this.#note = undefined;
    return note;
  }
}
