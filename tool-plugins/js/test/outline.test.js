// Unit tests of the Markdown outline logic, under Node (no component involved).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { outlineMarkdown, parseMarkdown } from '../src/outline.js';

const heads = (text) => parseMarkdown(text).headings.map((h) => [h.level, h.text, h.line]);

test('ATX headings with closing sequences, and what is not one', () => {
  const text = [
    '# Title #', //
    '##   Spaced   out  ##',
    '#hashtag',
    '####### seven',
    '   ### indented three',
    '    # indented four: code',
    '### ###',
    '#',
  ].join('\n');
  assert.deepEqual(heads(text), [
    [1, 'Title', 1],
    [2, 'Spaced out', 2],
    [3, 'indented three', 5],
    [3, '', 7],
    [1, '', 8],
  ]);
});

test('setext headings, including multi-line ones, and thematic breaks', () => {
  const text = [
    'Top', // 1
    '===', // 2
    '',
    'Second part', // 4
    'of a heading', // 5
    '---', // 6
    '',
    '---', // 8: a thematic break after a blank line
    '- item', // 9
    '---', // 10: a thematic break after a list item
    '> quote', // 11
    '---', // 12
  ].join('\n');
  assert.deepEqual(heads(text), [
    [1, 'Top', 1],
    [2, 'Second part of a heading', 4],
  ]);
});

test('headings inside fenced code, front matter and HTML comments are ignored', () => {
  const text = [
    '---',
    'title: front matter',
    '---',
    '# Real',
    '```bash',
    '# a shell comment',
    '```',
    '~~~~',
    '# still code',
    '```',
    '# still code: a shorter or other fence does not close',
    '~~~~',
    '<!--',
    '# commented out',
    '-->',
    '````md',
    '```',
    '# nested fence text',
    '````',
    '## After',
  ].join('\n');
  assert.deepEqual(heads(text), [
    [1, 'Real', 4],
    [2, 'After', 20],
  ]);
  const doc = parseMarkdown(text);
  assert.deepEqual(
    doc.codeBlocks.map((b) => [b.line, b.language]),
    [
      [5, 'bash'],
      [8, ''],
      [16, 'md'],
    ],
  );
});

test('an unclosed fence runs to the end of the document', () => {
  assert.deepEqual(heads('# A\n```\n# not a heading\n'), [[1, 'A', 1]]);
});

test('links, images, autolinks and reference definitions outside code', () => {
  const text = [
    'See [one](https://a) and [two][ref] and <https://b.example>.',
    '![logo](logo.png) and `[not](a link)`',
    '[ref]: https://c',
    '```',
    '[in](code)',
    '```',
    '- a [list link](x)',
    '  continued [line link](y)',
  ].join('\n');
  const doc = parseMarkdown(text);
  assert.equal(doc.links, 5);
  assert.equal(doc.images, 1);
  assert.equal(doc.definitions, 1);
});

test('section ranges end before the next heading of the same or a higher level', () => {
  const text = '# A\ntext\n## B\ntext\n### C\n## D\n# E\nlast\n';
  const doc = parseMarkdown(text);
  assert.deepEqual(
    doc.headings.map((h) => [h.text, h.line, h.endLine]),
    [
      ['A', 1, 6],
      ['B', 3, 5],
      ['C', 5, 5],
      ['D', 6, 6],
      ['E', 7, 8],
    ],
  );
});

test('CRLF line endings and a byte order mark', () => {
  assert.deepEqual(heads('\uFEFF# A\r\nB\r\n---\r\n'), [
    [1, 'A', 1],
    [2, 'B', 2],
  ]);
});

test('the outline text indents by level and hides levels past max_depth', () => {
  const text = '# A\n## B\n### C\n```js\nx\n```\n';
  assert.equal(
    outlineMarkdown('doc.md', text, 2),
    [
      'doc.md: 6 lines, 3 headings',
      'links: 0, images: 0, link reference definitions: 0',
      'fenced code blocks: 1 (js 1)',
      '',
      '# A  [L1-6]',
      '  ## B  [L2-6]',
      '(1 heading deeper than level 2 hidden)',
    ].join('\n'),
  );
  assert.match(outlineMarkdown('empty.md', 'just text\n'), /\(no headings\)$/);
});
