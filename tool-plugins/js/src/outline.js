// Outline of a Markdown document: the heading tree (ATX and setext) with line numbers and
// section ranges, and counts of links, images and fenced code blocks. Pure JavaScript with no
// imports, so it runs the same in the component and under Node (see test/outline.test.js).

const MAX_HEADING_TEXT = 120;

/** Columns of leading whitespace (a tab advances to the next multiple of 4). */
function indentOf(line) {
  let columns = 0;
  for (const ch of line) {
    if (ch === ' ') columns += 1;
    else if (ch === '\t') columns += 4 - (columns % 4);
    else break;
  }
  return columns;
}

function isBlank(line) {
  return line.trim() === '';
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const THEMATIC_BREAK = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const LIST_ITEM = /^ {0,3}(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)/;
const BLOCKQUOTE = /^ {0,3}>/;
const HTML_COMMENT_OPEN = /^ {0,3}<!--/;

function cleanHeadingText(text) {
  let clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length > MAX_HEADING_TEXT) clean = `${clean.slice(0, MAX_HEADING_TEXT - 1)}\u2026`;
  return clean;
}

/** Links and images of one line of prose (inline code spans removed first). */
function countInline(line, counts) {
  const prose = line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, '');
  if (/^ {0,3}\[[^\]]+\]:[ \t]*\S/.test(prose)) {
    counts.definitions += 1;
    return;
  }
  counts.images += (prose.match(/!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])/g) || []).length;
  const withoutImages = prose.replace(/!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])/g, '');
  counts.links += (withoutImages.match(/\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])/g) || []).length;
  counts.links += (withoutImages.match(/<(?:https?|ftp|mailto):[^\s<>]+>/gi) || []).length;
}

/**
 * Parses `text` and returns { lineCount, headings: [{level, text, line, endLine}],
 * links, images, definitions, codeBlocks: [{line, language}] }.
 */
export function parseMarkdown(text) {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const headings = [];
  const codeBlocks = [];
  const counts = { links: 0, images: 0, definitions: 0 };

  let i = 0;
  // YAML front matter: its `---` closer must not become a setext underline.
  if (lines[0] !== undefined && /^---[ \t]*$/.test(lines[0])) {
    for (let j = 1; j < lines.length; j += 1) {
      if (/^(?:---|\.\.\.)[ \t]*$/.test(lines[j])) {
        i = j + 1;
        break;
      }
    }
  }

  // The open paragraph: the lines a setext underline would turn into a heading.
  let paragraph = null; // { start: index, text: [] }
  let previousBlank = true;
  // 'list' or 'quote' while lines continue a list item or a block quote.
  let container = null;

  while (i < lines.length) {
    const line = lines[i];
    const lineNo = i + 1;

    const fence = FENCE_OPEN.exec(line);
    if (fence && !(fence[1][0] === '`' && fence[2].includes('`'))) {
      const marker = fence[1];
      const closer = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
      const language = fence[2].trim().split(/\s+/)[0] || '';
      codeBlocks.push({ line: lineNo, language });
      i += 1;
      while (i < lines.length && !closer.test(lines[i])) i += 1;
      i += 1; // past the closing fence (or the end of the document)
      paragraph = null;
      previousBlank = false;
      continue;
    }

    if (HTML_COMMENT_OPEN.test(line)) {
      while (i < lines.length && !lines[i].includes('-->')) i += 1;
      i += 1;
      paragraph = null;
      previousBlank = false;
      continue;
    }

    if (isBlank(line)) {
      paragraph = null;
      previousBlank = true;
      i += 1;
      continue;
    }

    // Inside a list item or a block quote: its continuation lines hold no top-level
    // headings (and cannot be setext-underlined into one), but their links count.
    if (container !== null && !LIST_ITEM.test(line) && !BLOCKQUOTE.test(line)) {
      const indent = indentOf(line);
      const interrupts = indent < 2 && (ATX.test(line) || THEMATIC_BREAK.test(line));
      const continues = container === 'list' ? !previousBlank || indent >= 2 : !previousBlank;
      if (continues && !interrupts) {
        countInline(line, counts);
        paragraph = null;
        previousBlank = false;
        i += 1;
        continue;
      }
      container = null;
    }

    // Indented code (4+ columns, not continuing a paragraph): no headings, no links.
    if (indentOf(line) >= 4 && paragraph === null && previousBlank) {
      i += 1;
      continue;
    }

    if (paragraph !== null && SETEXT.test(line)) {
      const level = line.trim()[0] === '=' ? 1 : 2;
      headings.push({
        level,
        text: cleanHeadingText(paragraph.text.join(' ')),
        line: paragraph.start + 1,
      });
      paragraph = null;
      previousBlank = false;
      i += 1;
      continue;
    }

    const atx = ATX.exec(line);
    if (atx) {
      const content = /^#+$/.test(atx[2] || '') ? '' : atx[2] || '';
      headings.push({ level: atx[1].length, text: cleanHeadingText(content), line: lineNo });
      countInline(atx[2] || '', counts);
      paragraph = null;
      previousBlank = false;
      i += 1;
      continue;
    }

    countInline(line, counts);
    if (THEMATIC_BREAK.test(line)) {
      paragraph = null;
    } else if (LIST_ITEM.test(line) || BLOCKQUOTE.test(line)) {
      // Not paragraph text: a `---` after it is a thematic break, not an underline.
      container = LIST_ITEM.test(line) ? 'list' : 'quote';
      paragraph = null;
    } else if (paragraph === null) {
      paragraph = { start: i, text: [line.trim()] };
    } else {
      paragraph.text.push(line.trim());
    }
    previousBlank = false;
    i += 1;
  }

  // A section runs until the next heading of the same or a higher level.
  for (let h = 0; h < headings.length; h += 1) {
    let end = lines.length;
    for (let k = h + 1; k < headings.length; k += 1) {
      if (headings[k].level <= headings[h].level) {
        end = headings[k].line - 1;
        break;
      }
    }
    headings[h].endLine = Math.max(end, headings[h].line);
  }

  return { lineCount: lines.length, headings, codeBlocks, ...counts };
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The outline of `text` as text for the model, headings deeper than `maxDepth` hidden. */
export function outlineMarkdown(path, text, maxDepth = 6) {
  const doc = parseMarkdown(text);
  const shown = doc.headings.filter((h) => h.level <= maxDepth);

  const languages = new Map();
  for (const block of doc.codeBlocks) {
    const key = block.language || 'no language';
    languages.set(key, (languages.get(key) || 0) + 1);
  }
  const languageList = [...languages.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([language, n]) => `${language} ${n}`)
    .join(', ');

  const out = [
    `${path}: ${plural(doc.lineCount, 'line')}, ${plural(doc.headings.length, 'heading')}`,
    `links: ${doc.links}, images: ${doc.images}, link reference definitions: ${doc.definitions}`,
    `fenced code blocks: ${doc.codeBlocks.length}${languageList ? ` (${languageList})` : ''}`,
    '',
  ];
  if (shown.length === 0) {
    out.push(doc.headings.length ? `(no headings up to level ${maxDepth})` : '(no headings)');
  }
  for (const h of shown) {
    const range = h.endLine > h.line ? `L${h.line}-${h.endLine}` : `L${h.line}`;
    out.push(`${'  '.repeat(h.level - 1)}${'#'.repeat(h.level)} ${h.text}  [${range}]`);
  }
  const hidden = doc.headings.length - shown.length;
  if (hidden > 0) out.push(`(${plural(hidden, 'heading')} deeper than level ${maxDepth} hidden)`);
  return out.join('\n');
}
