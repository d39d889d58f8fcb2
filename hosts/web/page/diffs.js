// The unified diff shown under a tool call, for the files it changed.

import { structuredPatch } from 'diff';
import { h } from './dom.js';
import { ABSENT } from './workspace-mirror.js';

function sameContent(a, b) {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a === ABSENT || b === ABSENT) return a === b;
  return false; // binary or large contents: shown as changed
}

/** The diff of `changes` (path -> `{from, before, after}`), or null when nothing changed. */
export function renderDiff(changes) {
  const files = [];
  for (const [path, { from, before, after }] of changes) {
    if (from === path && sameContent(before, after)) continue;
    const stat = { add: 0, del: 0 };
    const kind =
      before === ABSENT ? 'new file' : after === ABSENT ? 'deleted' : from !== path ? 'renamed' : 'modified';
    const name = from !== path && before !== ABSENT && after !== ABSENT ? `${from} → ${path}` : path;
    const body = h('pre', { class: 'diff-body' });
    const textBefore = before === ABSENT ? '' : before;
    const textAfter = after === ABSENT ? '' : after;
    if (typeof textBefore !== 'string' || typeof textAfter !== 'string') {
      const size = typeof textAfter === 'object' ? textAfter.size : textBefore.size;
      body.append(h('span', { class: 'meta', text: `(binary or large file, ${size} bytes: not shown)` }));
    } else {
      const patch = structuredPatch(from, path, textBefore, textAfter, '', '', { context: 3 });
      for (const hunk of patch.hunks) {
        body.append(
          h('span', {
            class: 'hunk',
            // As `diff -u` writes it: an empty side starts at the line before.
            text: `@@ -${hunk.oldLines ? hunk.oldStart : hunk.oldStart - 1},${hunk.oldLines} +${hunk.newLines ? hunk.newStart : hunk.newStart - 1},${hunk.newLines} @@`,
          }),
        );
        for (const line of hunk.lines) {
          const mark = line[0];
          const cls = mark === '+' ? 'add' : mark === '-' ? 'del' : mark === '\\' ? 'meta' : 'ctx';
          if (cls === 'add') stat.add += 1;
          if (cls === 'del') stat.del += 1;
          body.append(h('span', { class: cls, text: line }));
        }
      }
      if (!patch.hunks.length) body.append(h('span', { class: 'meta', text: '(contents unchanged)' }));
    }
    files.push(
      h(
        'div',
        { class: 'diff-file', 'data-path': path },
        h(
          'div',
          { class: 'diff-header' },
          h('span', { class: 'diff-path', text: name }),
          h('span', { class: `diff-kind ${kind.replace(' ', '-')}`, text: kind }),
          h(
            'span',
            { class: 'diff-stat' },
            h('span', { class: 'stat-add', text: `+${stat.add}` }),
            ' ',
            h('span', { class: 'stat-del', text: `−${stat.del}` }),
          ),
        ),
        body,
      ),
    );
  }
  return files.length ? h('div', { class: 'diff', role: 'group', 'aria-label': 'File changes' }, files) : null;
}
