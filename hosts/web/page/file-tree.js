// The workspace's files as a tree (#files) and the file selected in it (#file-view). Both are
// redrawn from the workspace, once per burst of changes however many files a tool touches.

import { h } from './dom.js';
import { formatSize, plural } from './format.js';
import { ABSENT, contentOf } from './workspace-mirror.js';

/**
 * `elements`: `files` (the tree), `summary` (file count and size), `view` and `viewTitle` (the
 * selected file). `getWorkspace()` returns the workspace shown now.
 */
export function createFileTree({ elements: ui, getWorkspace }) {
  let selectedPath = null;
  /** Directories the person folded, kept folded across redraws. */
  const collapsedDirs = new Set();
  /** Files changed since the last redraw, highlighted briefly. */
  const flashPaths = new Set();
  let scheduled = false;

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      renderTree();
      renderFileView();
    });
  }

  function renderTree() {
    const entries = getWorkspace().entries();
    const root = { dirs: new Map(), files: [] };
    const dirNode = (path) => {
      let node = root;
      let prefix = '';
      for (const part of path.split('/')) {
        prefix = prefix ? `${prefix}/${part}` : part;
        if (!node.dirs.has(part)) node.dirs.set(part, { path: prefix, dirs: new Map(), files: [] });
        node = node.dirs.get(part);
      }
      return node;
    };
    let totalBytes = 0;
    let fileCount = 0;
    for (const entry of entries) {
      if (entry.kind === 'directory') {
        dirNode(entry.path);
        continue;
      }
      const slash = entry.path.lastIndexOf('/');
      const parent = slash < 0 ? root : dirNode(entry.path.slice(0, slash));
      parent.files.push(entry);
      totalBytes += entry.size;
      fileCount += 1;
    }

    // Redrawing replaces the buttons: keep the keyboard focus on the same file.
    const focusedPath = document.activeElement?.closest?.('#files [data-path]')?.dataset.path;
    const list = (node) =>
      h(
        'ul',
        { class: 'tree' },
        [...node.dirs.entries()].map(([name, dir]) => {
          const details = h(
            'details',
            { open: !collapsedDirs.has(dir.path), 'data-dir': dir.path },
            h('summary', { class: 'dir-name' }, h('span', { class: 'icon', 'aria-hidden': 'true' }), `${name}/`),
            list(dir),
          );
          details.addEventListener('toggle', () => {
            if (details.open) collapsedDirs.delete(dir.path);
            else collapsedDirs.add(dir.path);
          });
          return h('li', { class: 'dir' }, details);
        }),
        node.files.map((entry) =>
          h(
            'li',
            {},
            h(
              'button',
              {
                type: 'button',
                class: `file${flashPaths.has(entry.path) ? ' flash' : ''}`,
                'data-path': entry.path,
                'aria-current': entry.path === selectedPath ? 'true' : undefined,
                title: entry.path,
              },
              h('span', { class: 'file-name', text: entry.path.slice(entry.path.lastIndexOf('/') + 1) }),
              h('span', { class: 'file-size', text: formatSize(entry.size) }),
            ),
          ),
        ),
      );

    ui.files.replaceChildren(entries.length ? list(root) : h('p', { class: 'muted empty', text: 'No files yet.' }));
    flashPaths.clear();
    ui.summary.textContent = `${plural(fileCount, 'file')} · ${formatSize(totalBytes)}`;
    if (focusedPath) ui.files.querySelector(`[data-path="${CSS.escape(focusedPath)}"]`)?.focus();
  }

  function renderFileView() {
    if (!selectedPath) {
      ui.viewTitle.textContent = 'Select a file to view it.';
      ui.view.textContent = '';
      ui.view.hidden = true;
      return;
    }
    ui.view.hidden = false;
    const workspace = getWorkspace();
    if (!workspace.exists(selectedPath)) {
      ui.viewTitle.replaceChildren(h('strong', { text: selectedPath }), ' (deleted)');
      ui.view.textContent = '';
      return;
    }
    const size = workspace.stat(selectedPath).size;
    ui.viewTitle.replaceChildren(h('strong', { text: selectedPath }), ` · ${formatSize(size)}`);
    const content = contentOf(workspace, selectedPath);
    if (typeof content === 'string') ui.view.textContent = content;
    else ui.view.textContent = content === ABSENT ? '' : `(${content.binary ? 'binary' : 'large'} file, ${size} bytes)`;
  }

  ui.files.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-path]');
    if (!button) return;
    selectedPath = button.dataset.path;
    for (const other of ui.files.querySelectorAll('[aria-current]')) other.removeAttribute('aria-current');
    button.setAttribute('aria-current', 'true');
    renderFileView();
  });

  return {
    /** Redraws the tree and the viewer now. */
    render() {
      renderTree();
      renderFileView();
    },
    /** Redraws them once the current changes are done. */
    schedule,
    /** Highlights a file at the next redraw. */
    flash(path) {
      flashPaths.add(path);
    },
    clearSelection() {
      selectedPath = null;
    },
    /** Forgets the selected file when the (new) workspace does not have it. */
    dropMissingSelection() {
      if (selectedPath && !getWorkspace().exists(selectedPath)) selectedPath = null;
    },
  };
}
