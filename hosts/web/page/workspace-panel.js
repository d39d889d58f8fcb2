// The workspace panel: the in-memory workspace the agent works on, its file tree, and the
// download, upload and reset buttons.

import { MemoryWorkspace } from '../src/index.js';
import { h } from './dom.js';
import { createFileTree } from './file-tree.js';
import { errorMessage } from './format.js';
import { createWorkspaceMirror } from './workspace-mirror.js';

export const SAMPLE_FILES = {
  'README.md':
    '# Greeter\n\n' +
    'A tiny sample project for the agent to work on, right here in your browser.\n\n' +
    'Things to ask:\n\n' +
    '- Add a `farewell(name)` function to src/greet.js and document it here.\n' +
    '- Write tests for src/greet.js in test/greet.test.js.\n',
  'src/greet.js':
    "// Greets someone by name.\nexport function greet(name) {\n  return 'Hello, ' + name + '!';\n}\n",
};

/**
 * `elements`: the tree's (`files`, `summary`, `view`, `viewTitle`) and the toolbar's
 * (`download`, `upload`, `reset`). `onChanges(records)` receives each change as per-file
 * `{path, from, before, after}` records; `isBusy()` says whether the agent is working (the
 * workspace cannot be replaced then); `onReplaced(why)` follows each replacement.
 */
export function createWorkspacePanel({ elements: ui, onChanges, isBusy, onReplaced }) {
  let workspace;
  let unsubscribe = () => {};
  const tree = createFileTree({ elements: ui, getWorkspace: () => workspace });

  function set(next) {
    unsubscribe();
    workspace = next;
    const mirror = createWorkspaceMirror(workspace);
    unsubscribe = workspace.onChange((change) => {
      // Called synchronously inside the tool's execution: read the contents now, attribute the
      // change to a tool call once the events queued before it have been delivered.
      const records = mirror.capture(change);
      if (records.length) queueMicrotask(() => onChanges(records));
      tree.flash(change.to ?? change.path);
      tree.schedule();
    });
    tree.dropMissingSelection();
    tree.schedule();
  }

  /** Replaces the whole workspace (seed, upload, reset): a session bound to the old one ends. */
  function replace(next, why) {
    tree.clearSelection();
    if (isBusy()) throw new Error('the agent is working: stop it before replacing the workspace');
    set(next);
    onReplaced(why);
  }

  ui.download.addEventListener('click', () => {
    const url = URL.createObjectURL(new Blob([workspace.toZip()], { type: 'application/zip' }));
    const link = h('a', { href: url, download: 'workspace.zip', hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });

  ui.upload.addEventListener('change', async () => {
    const file = ui.upload.files?.[0];
    ui.upload.value = '';
    if (!file) return;
    try {
      const next = MemoryWorkspace.fromZip(new Uint8Array(await file.arrayBuffer()));
      replace(next, `The workspace was replaced by ${file.name}`);
    } catch (e) {
      ui.summary.textContent = `Could not open ${file.name}: ${errorMessage(e)}`;
    }
  });

  ui.reset.addEventListener('click', () => {
    replace(new MemoryWorkspace(SAMPLE_FILES), 'The workspace was reset to the sample');
  });

  return {
    get workspace() {
      return workspace;
    },
    set,
    replace,
    /** Draws the tree and the viewer now (at start-up, before any change). */
    render: tree.render,
  };
}
