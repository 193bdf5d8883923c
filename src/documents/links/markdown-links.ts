// A scanner of its own rather than marked's lexer, which the console renders with: every write
// passes here, and marked took 0.45-1.2 ms to lex a 7 KB document with 20 links (its inline
// rules try a dozen regular expressions at each character), where a bulk write spends some
// 0.4 ms of CPU on the whole document. This one reads each character once (some 50 µs for
// the same document on a loaded machine, where marked took 1.3 ms). What counts as a link and as code is still marked's: the property test
// in markdown-links.spec.ts checks both agree on generated documents.

import { type Definition, normalizeLabel, textBlocks } from './markdown-blocks';

/** How a link is written: `[text](path)`, `[[wikilink]]`, or a `kb://` URI. */
export type LinkKind = 'markdown' | 'wikilink' | 'uri';

/** One link as written in a body. Offsets are UTF-16 code units, as JavaScript counts. */
export interface FoundLink {
  readonly kind: LinkKind;
  /**
   * What the link names, decoded: a markdown link's destination without its `#fragment`
   * (percent-decoded), a wikilink's part before `#` and `|`, a URI's id.
   */
  readonly target: string;
  /** The part after `#` (a heading, an anchor, a block), or `null`. */
  readonly fragment: string | null;
  /** The text a reader sees: the link's text, a wikilink's label or target, the URI. */
  readonly label: string;
  /** The whole link: `[start, end)` of the body. */
  readonly start: number;
  readonly end: number;
  /**
   * Where the target is written, the part a move rewrites (before the fragment): in the link
   * itself, or in the definition a reference link uses (several links may share one).
   */
  readonly targetStart: number;
  readonly targetEnd: number;
  /** The target was written between `<` and `>` (a markdown destination or an autolink). */
  readonly angle: boolean;
}

const BACKSLASH = 92;
const BACKTICK = 96;
const OPEN = 91; // [
const CLOSE = 93; // ]
const PAREN_OPEN = 40;
const PAREN_CLOSE = 41;
const BANG = 33;
const LESS = 60;
const NEWLINE = 10;
const SPACE = 32;
const TAB = 9;

/** ASCII punctuation, which a backslash escapes (CommonMark). */
const ESCAPABLE = /[!-/:-@[-`{-~]/;

/** The rest of a bare `kb://` URI: up to white space, a bracket, a quote or a bar. */
const URI_TAIL = /[^\s<>()[\]"'`|]*/y;

/** Characters where something may start; everything between them is plain text. */
const SPECIAL = /[\\`<![]|kb:\/\//g;

/**
 * Every link in a markdown body, in order: inline and reference markdown links (not images),
 * `[[wikilinks]]` and `![[embeds]]`, `<kb://…>` autolinks and bare `kb://` URIs in text. Nothing
 * inside fenced or indented code blocks, code spans or HTML comments is a link, nor is a
 * backslash-escaped bracket. External URLs are returned like any markdown link: which links
 * name documents is for the caller (link-targets.ts) to decide.
 */
export function extractLinks(body: string): FoundLink[] {
  // Most documents have no link at all: nothing to read then.
  if (body.indexOf('[') === -1 && body.indexOf('kb://') === -1) return [];
  const blocks = textBlocks(body);
  const definitions = new Map<string, Definition>();
  for (const block of blocks) {
    if (block.definition !== undefined && !definitions.has(block.definition.label)) {
      definitions.set(block.definition.label, block.definition);
    }
  }
  const links: FoundLink[] = [];
  for (const block of blocks) {
    if (block.definition === undefined)
      scanInline(body, block.start, block.end, definitions, links);
  }
  return links;
}

/** Finds the links of one block `[from, to)` of `body`. */
function scanInline(
  body: string,
  from: number,
  to: number,
  definitions: ReadonlyMap<string, Definition>,
  links: FoundLink[],
): void {
  SPECIAL.lastIndex = from;
  let i = from;
  while (i < to) {
    SPECIAL.lastIndex = i;
    const match = SPECIAL.exec(body);
    if (match === null || match.index >= to) return;
    i = match.index;
    const code = body.charCodeAt(i);
    if (code === BACKSLASH) {
      i += ESCAPABLE.test(body[i + 1] ?? '') ? 2 : 1;
    } else if (code === BACKTICK) {
      i = afterCodeSpan(body, i, to);
    } else if (code === LESS) {
      i = autolink(body, i, to, links);
    } else if (code === BANG) {
      if (body.startsWith('[[', i + 1)) {
        const end = wikilink(body, i + 1, to, links, i);
        i = end === -1 ? i + 1 : end;
      } else if (body.charCodeAt(i + 1) === OPEN) {
        // An image: read as a link would be, and skipped whole (an image is not a link).
        const image = link(body, i + 1, to, definitions);
        i = image === undefined ? i + 2 : image.end;
      } else i += 1;
    } else if (code === OPEN) {
      if (body.charCodeAt(i + 1) === OPEN) {
        const end = wikilink(body, i, to, links, i);
        if (end !== -1) {
          i = end;
          continue;
        }
      }
      const found = link(body, i, to, definitions);
      if (found === undefined) i += 1;
      else {
        links.push(found);
        i = found.end;
      }
    } else {
      i = bareUri(body, i, to, links);
    }
  }
}

/** After the code span opening at `i` (a run of backticks), or after the run if it opens none. */
function afterCodeSpan(body: string, i: number, to: number): number {
  let n = 0;
  while (body.charCodeAt(i + n) === BACKTICK) n++;
  let at = i + n;
  for (;;) {
    const next = body.indexOf('`', at);
    if (next === -1 || next >= to) return i + n;
    let m = 0;
    while (body.charCodeAt(next + m) === BACKTICK) m++;
    if (m === n) return next + m;
    at = next + m;
  }
}

/** Whether `[from, to)`, returned by afterCodeSpan for `from`, is a whole code span. */
function closesSpan(body: string, from: number, to: number): boolean {
  let n = 0;
  while (body.charCodeAt(from + n) === BACKTICK) n++;
  return to - from > n;
}

/** `<kb://id>` becomes a link; `<!--…-->` and other autolinks are stepped over. */
function autolink(body: string, i: number, to: number, links: FoundLink[]): number {
  const close = body.indexOf('>', i + 1);
  if (close === -1 || close >= to) return i + 1;
  const inside = body.slice(i + 1, close);
  if (/[\s<]/.test(inside)) return i + 1;
  if (/^kb:\/\//i.test(inside)) {
    const hash = inside.indexOf('#');
    links.push({
      kind: 'uri',
      target: safeDecode(inside.slice(5, hash === -1 ? undefined : hash)),
      fragment: hash === -1 ? null : inside.slice(hash + 1),
      label: inside,
      start: i,
      end: close + 1,
      targetStart: i + 1,
      targetEnd: hash === -1 ? close : i + 1 + hash,
      angle: true,
    });
    return close + 1;
  }
  return /^[a-z][a-z0-9+.-]{1,31}:/i.test(inside) ? close + 1 : i + 1;
}

/** A bare `kb://id` in text: up to white space or a bracket, trailing punctuation left out. */
function bareUri(body: string, i: number, to: number, links: FoundLink[]): number {
  const previous = body.charCodeAt(i - 1);
  if (i > 0 && /[\w/:.-]/.test(String.fromCharCode(previous))) return i + 5;
  URI_TAIL.lastIndex = i + 5;
  let end = Math.min(to, i + 5 + URI_TAIL.exec(body)![0].length);
  while (end > i + 5 && /[.,;:!?]/.test(body[end - 1])) end--;
  if (end === i + 5) return end;
  const written = body.slice(i, end);
  const hash = written.indexOf('#');
  const path = hash === -1 ? written.slice(5) : written.slice(5, hash);
  links.push({
    kind: 'uri',
    target: safeDecode(path),
    fragment: hash === -1 ? null : written.slice(hash + 1),
    label: written,
    start: i,
    end,
    targetStart: i,
    targetEnd: hash === -1 ? end : i + hash,
    angle: false,
  });
  return end;
}

/**
 * A `[[target#heading|label]]` at `open` (its first `[`), on one line: pushed, and the offset
 * after it returned; `-1` when there is none there. `start` is where the link starts (the `!`
 * of an embed).
 */
function wikilink(
  body: string,
  open: number,
  to: number,
  links: FoundLink[],
  start: number,
): number {
  const close = body.indexOf(']]', open + 2);
  if (close === -1 || close >= to) return -1;
  const inner = body.slice(open + 2, close);
  if (inner.includes('\n') || inner.includes('[') || inner.includes(']')) return -1;
  const bar = inner.indexOf('|');
  const reference = bar === -1 ? inner : inner.slice(0, bar);
  const hash = reference.indexOf('#');
  const name = hash === -1 ? reference : reference.slice(0, hash);
  const target = name.trim();
  if (target === '') return -1;
  const lead = name.length - name.trimStart().length;
  const label = bar === -1 ? '' : inner.slice(bar + 1).trim();
  links.push({
    kind: 'wikilink',
    target,
    fragment: hash === -1 ? null : reference.slice(hash + 1).trim() || null,
    label: label === '' ? target : label,
    start,
    end: close + 2,
    targetStart: open + 2 + lead,
    targetEnd: open + 2 + lead + target.length,
    angle: false,
  });
  return close + 2;
}

/**
 * The markdown link whose text opens at `open` (`[`), inline or by reference; `undefined`
 * when the bracket opens none.
 */
function link(
  body: string,
  open: number,
  to: number,
  definitions: ReadonlyMap<string, Definition>,
): FoundLink | undefined {
  const textEnd = closingBracket(body, open, to);
  if (textEnd === -1) return undefined;
  // A link's text holds no link (an image, yes): with one inside, only the inner one is a link.
  if (holdsLink(body, open + 1, textEnd, definitions)) return undefined;
  const text = body.slice(open + 1, textEnd);
  const after = body.charCodeAt(textEnd + 1);
  if (after === PAREN_OPEN) {
    const inline = destination(body, textEnd + 2, to);
    if (inline !== undefined) {
      return markdownLink(body, open, inline.end, text, inline);
    }
  }
  let reference = text;
  let end = textEnd + 1;
  if (after === OPEN) {
    const refEnd = body.indexOf(']', textEnd + 2);
    if (refEnd !== -1 && refEnd < to && !body.slice(textEnd + 2, refEnd).includes('[')) {
      const given = body.slice(textEnd + 2, refEnd);
      if (given.trim() !== '') reference = given;
      end = refEnd + 1;
    }
  }
  const definition = definitions.get(normalizeLabel(reference));
  if (definition === undefined) return undefined;
  return markdownLink(body, open, end, text, definition);
}

function holdsLink(
  body: string,
  from: number,
  to: number,
  definitions: ReadonlyMap<string, Definition>,
): boolean {
  for (let i = from; i < to; i++) {
    const code = body.charCodeAt(i);
    if (code === BACKSLASH) i++;
    else if (code === BACKTICK) i = afterCodeSpan(body, i, to) - 1;
    else if (code === OPEN && body.charCodeAt(i - 1) !== BANG) {
      if (link(body, i, to, definitions) !== undefined) return true;
    }
  }
  return false;
}

function markdownLink(
  body: string,
  start: number,
  end: number,
  text: string,
  target: { destination: string; start: number; end: number; angle: boolean },
): FoundLink {
  const hash = target.destination.indexOf('#');
  const written = hash === -1 ? target.destination : target.destination.slice(0, hash);
  const uri = /^kb:\/\//i.test(written);
  return {
    kind: uri ? 'uri' : 'markdown',
    target: safeDecode(unescape(uri ? written.slice(5) : written)),
    fragment: hash === -1 ? null : safeDecode(target.destination.slice(hash + 1)),
    label: plainLabel(text),
    start,
    end,
    targetStart: target.start,
    targetEnd: target.start + written.length,
    angle: target.angle,
  };
}

/**
 * The `]` closing the link text opening at `open`: brackets nest, code spans and escapes are
 * stepped over. `-1` when it does not close in the block.
 */
function closingBracket(body: string, open: number, to: number): number {
  let depth = 0;
  for (let i = open + 1; i < to; i++) {
    const code = body.charCodeAt(i);
    if (code === BACKSLASH) i++;
    else if (code === BACKTICK) {
      // A backtick that opens no code span ends the text, as marked reads it.
      const after = afterCodeSpan(body, i, to);
      if (body.charCodeAt(after - 1) === BACKTICK && !closesSpan(body, i, after)) return -1;
      i = after - 1;
    } else if (code === OPEN) depth++;
    else if (code === CLOSE) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/**
 * An inline link's destination and optional title after its `(` (at `from`), up to its `)`:
 * the destination's text and offsets, and the offset after the `)`.
 */
function destination(
  body: string,
  from: number,
  to: number,
): { destination: string; start: number; end: number; angle: boolean } | undefined {
  let i = skipSpace(body, from, to);
  let start: number;
  let end: number;
  let angle = false;
  if (body.charCodeAt(i) === LESS) {
    angle = true;
    start = i + 1;
    end = start;
    while (end < to) {
      const code = body.charCodeAt(end);
      if (code === BACKSLASH) end += 2;
      else if (code === 62)
        break; // >
      else if (code === LESS || code === NEWLINE) return undefined;
      else end++;
    }
    if (end >= to) return undefined;
    i = end + 1;
  } else {
    start = i;
    let depth = 0;
    while (i < to) {
      const code = body.charCodeAt(i);
      if (code === BACKSLASH && ESCAPABLE.test(body[i + 1] ?? '')) i += 2;
      else if (code <= SPACE || code === 127) break;
      else if (code === PAREN_OPEN) {
        depth++;
        i++;
      } else if (code === PAREN_CLOSE) {
        if (depth === 0) break;
        depth--;
        i++;
      } else i++;
    }
    end = i;
    if (depth !== 0) return undefined;
  }
  const destinationEnd = end;
  i = skipSpace(body, i, to);
  const quote = body[i];
  if ((quote === '"' || quote === "'" || quote === '(') && i > destinationEnd) {
    const closer = quote === '(' ? ')' : quote;
    let j = i + 1;
    while (j < to && body[j] !== closer) j += body.charCodeAt(j) === BACKSLASH ? 2 : 1;
    if (j >= to) return undefined;
    i = skipSpace(body, j + 1, to);
  }
  if (body.charCodeAt(i) !== PAREN_CLOSE) return undefined;
  return { destination: body.slice(start, destinationEnd), start, end: i + 1, angle };
}

/** After spaces, tabs and at most one line ending. */
function skipSpace(body: string, i: number, to: number): number {
  let newlines = 0;
  while (i < to) {
    const code = body.charCodeAt(i);
    if (code === SPACE || code === TAB || code === 13) i++;
    else if (code === NEWLINE && newlines === 0) {
      newlines++;
      i++;
    } else break;
  }
  return i;
}

/** Backslash escapes taken out of a destination. */
function unescape(text: string): string {
  return text.indexOf('\\') === -1 ? text : text.replace(/\\([!-/:-@[-`{-~])/g, '$1');
}

function safeDecode(text: string): string {
  if (text.indexOf('%') === -1) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A link's text as a reader sees it: images' alternative text, no emphasis or code marks. */
function plainLabel(text: string): string {
  if (!/[!\\`*_\t\n\r]|\s\s/.test(text)) return text.trim();
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/`+|\*+|(?<!\w)_+|_+(?!\w)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
