// The block level of markdown-links.ts: which lines hold inline text (not code, not comments),
// cut into the blocks whose inline content is read together, and the reference definitions.

const SPACE = 32;
const TAB = 9;

/** A reference definition, `[label]: destination`. */
export interface Definition {
  readonly destination: string;
  readonly start: number;
  readonly end: number;
  readonly angle: boolean;
}

/** A run of lines whose inline content is read together (a paragraph, a heading, an item). */
export interface Block {
  readonly start: number;
  readonly end: number;
  /** Set when the block is one reference definition. */
  readonly definition?: Definition & { readonly label: string };
}

/** The first characters of a line that may make it a fence, an item, a quote or a heading. */
const MARKERS = /[`~>*+#\d-]/;
const FENCE = /^(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]|$))*[ \t]*(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^[ \t]*(?:>[ \t]*)*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;
const HEADING = /^[ \t]{0,3}(?:>[ \t]*)*#{1,6}(?:[ \t]|$)/;
const DEFINITION =
  /^[ \t]{0,3}\[((?:[^\\\]\n]|\\.){1,999})\]:[ \t]*(?:<([^<>\n]*)>|([^\s<>][^\s]*))[ \t]*(?:(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\))[ \t]*)?$/;

/**
 * The body's blocks of inline text, in order: code blocks and HTML comments are left out,
 * blank lines end a block, and a heading, a list item or a reference definition starts one.
 */
export function textBlocks(body: string): Block[] {
  const blocks: Block[] = [];
  let fence: Fence | undefined;
  let blockStart = -1;
  let blockEnd = -1;
  let previousBlank = true;
  let inList = false;
  const close = () => {
    if (blockStart !== -1) blocks.push({ start: blockStart, end: blockEnd });
    blockStart = -1;
  };
  for (let start = 0; start < body.length;) {
    let end = body.indexOf('\n', start);
    if (end === -1) end = body.length;
    const next = end + 1;
    if (body.charCodeAt(end - 1) === 13 && end > start) end--;
    // Where the line's text starts: a line of white space only is blank.
    let at = start;
    let indent = 0;
    for (; at < end; at++) {
      const code = body.charCodeAt(at);
      if (code === SPACE) indent++;
      else if (code === TAB) indent += 4 - (indent % 4);
      else break;
    }
    const first = at < end ? body[at] : '';
    const marked = first !== '' && MARKERS.test(first);

    if (fence !== undefined) {
      const line = body.slice(start, end);
      if (!endsContainer(fence, line)) {
        const closing = marked ? FENCE.exec(line) : null;
        if (
          closing !== null &&
          closing[1][0] === fence.char &&
          closing[1].length >= fence.length &&
          closing[2].trim() === ''
        ) {
          fence = undefined;
        }
        start = next;
        continue;
      }
      fence = undefined;
    }
    if (first === '' || (first.trim() === '' && body.slice(at, end).trim() === '')) {
      close();
      previousBlank = true;
      start = next;
      continue;
    }
    const line = marked || first === '[' ? body.slice(start, end) : '';
    // Only a line starting with one of MARKERS can be more than text.
    const item = marked && LIST_ITEM.test(line);
    // A list goes on until a line that is neither an item nor indented follows a blank line.
    if (item) inList = true;
    else if (previousBlank && indent === 0) inList = false;
    const opening = marked ? FENCE.exec(line) : null;
    if (opening !== null && !(opening[1][0] === '`' && opening[2].includes('`'))) {
      close();
      const prefix = line.slice(0, line.indexOf(opening[1]));
      fence = {
        char: opening[1][0],
        length: opening[1].length,
        // In a list item or a block quote, the fence ends with its container.
        container: /^[ \t]*>/.test(prefix) ? 'quote' : inList ? prefix.length : undefined,
      };
      previousBlank = false;
      start = next;
      continue;
    }
    if (indent >= 4 && previousBlank && !inList) {
      // An indented code block, from here to the next line indented less.
      close();
      start = next;
      continue;
    }
    if (indent >= 4 && blockStart === -1 && !inList) {
      // Still inside the indented code block begun above.
      start = next;
      continue;
    }
    previousBlank = false;

    const definition = first === '[' ? DEFINITION.exec(line) : null;
    if (definition !== null && blockStart === -1) {
      const angle = definition[2] !== undefined;
      const destination = angle ? definition[2] : definition[3];
      const at = start + line.indexOf(angle ? `<${destination}>` : destination, line.indexOf(']:'));
      blocks.push({
        start,
        end,
        definition: {
          label: normalizeLabel(definition[1]),
          destination,
          start: angle ? at + 1 : at,
          end: (angle ? at + 1 : at) + destination.length,
          angle,
        },
      });
      start = next;
      continue;
    }
    const heading = marked && HEADING.test(line);
    if (item || heading) close();
    if (blockStart === -1) blockStart = start;
    blockEnd = end;
    if (heading) close();
    start = next;
  }
  close();
  return withoutComments(body, blocks);
}

interface Fence {
  readonly char: string;
  readonly length: number;
  /** The fence's list item (the column its content starts at) or block quote, if any. */
  readonly container: number | 'quote' | undefined;
}

/** A line that ends the container of an open fence (then the fence with it). */
function endsContainer(fence: Fence, line: string): boolean {
  if (fence.container === undefined || line.trim() === '') return false;
  if (fence.container === 'quote') return !/^[ \t]*>/.test(line);
  return indentation(line) < fence.container;
}

/** Columns of leading white space (a tab to the next multiple of 4), past any `>` markers. */
function indentation(line: string): number {
  let column = 0;
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (code === SPACE) column++;
    else if (code === TAB) column += 4 - (column % 4);
    else break;
  }
  return column;
}

/** The blocks with HTML comments (`<!-- … -->`, which may span blocks) cut out. */
function withoutComments(body: string, blocks: Block[]): Block[] {
  if (body.indexOf('<!--') === -1) return blocks;
  const kept: Block[] = [];
  let commentEnd = -1;
  for (const block of blocks) {
    let from = Math.max(block.start, commentEnd);
    if (block.definition !== undefined) {
      if (from === block.start) kept.push(block);
      continue;
    }
    while (from < block.end) {
      const open = body.indexOf('<!--', from);
      if (open === -1 || open >= block.end) {
        kept.push({ start: from, end: block.end });
        break;
      }
      if (open > from) kept.push({ start: from, end: open });
      const shut = body.indexOf('-->', open + 4);
      commentEnd = shut === -1 ? body.length : shut + 3;
      from = commentEnd;
    }
  }
  return kept;
}

/** Reference labels match case-insensitively, their inner white space collapsed (CommonMark). */
export function normalizeLabel(label: string): string {
  return label.trim().replace(/\s+/g, ' ').toLowerCase();
}
