import { Lexer, type Token, type Tokens } from 'marked';
import { countTokens, splitAtTokens, splitByTokens, tailTokens } from '../embedders/tokenizer';

/** One piece of a document, as embedded and stored. */
export interface Chunk {
  /** Position in the document, from 0. */
  readonly index: number;
  /** Headings above the chunk, outermost first (`['Guide', 'Install']`). */
  readonly headings: readonly string[];
  /** The chunk's own markdown (what snippets are cut from). */
  readonly content: string;
  /** What is embedded: a context line (title, heading path) and the content. */
  readonly text: string;
  /**
   * cl100k tokens of `text`: counted exactly near the limit, else the sum of its parts'
   * counts (within a few tokens). The exact count never exceeds the chunker's `maxTokens`.
   */
  readonly tokens: number;
}

export interface ChunkerOptions {
  /** Size a chunk is filled up to, in tokens. */
  readonly targetTokens: number;
  /** Tokens of the previous chunk repeated at the start of the next one inside a section. */
  readonly overlapTokens: number;
  /** Hard limit of one embedding input (the model's), context line included; at least 16. */
  readonly maxTokens: number;
}

export const DEFAULT_CHUNKER_OPTIONS: ChunkerOptions = {
  targetTokens: 400,
  overlapTokens: 50,
  maxTokens: 8191,
};

type BlockKind = 'heading' | 'paragraph' | 'code';

interface Block {
  kind: BlockKind;
  text: string;
  tokens: number;
  /** Heading path in force at this block (a heading block includes itself). */
  headings: string[];
  /**
   * A later piece of one line or sentence cut by tokens: what joins it to the piece before
   * when both go in one chunk (nothing inside a word, a space between words), not a blank line.
   */
  continues?: string;
}

/** A code block's opening fence (indented as far as a list item's code may be). */
const FENCE_OPEN = /^[ \t]*(`{3,}|~{3,})/;
const SEPARATOR_TOKENS = 2;
/** The smallest input chunked: half for the context line, the rest fits any character. */
const MIN_MAX_TOKENS = 16;
/**
 * Below this share of the hard limit a chunk's count is the sum of its parts' counts (plus
 * separators) instead of a second pass of the tokenizer over the joined text: the two
 * differ by a token or two, far from mattering there.
 */
const ESTIMATE_TRUSTED = 0.8;

/**
 * Splits a markdown document into chunks for embedding.
 *
 * Markdown-aware: a heading starts a new chunk (unless the current one is still small), the
 * heading path goes with every chunk, paragraphs are packed whole up to `targetTokens`, and a
 * fenced code block is never cut while it fits in one embedding input (`maxTokens`). Text
 * too long for that is cut at sentences, then lines or words, then tokens; a context line
 * (title and heading path) longer than half of `maxTokens` is cut to that half. Consecutive
 * chunks of one section share `overlapTokens` of text. Token counts use the real cl100k
 * tokenizer; every chunk's `text` is within `maxTokens`.
 */
export function chunkMarkdown(
  body: string,
  title = '',
  options: ChunkerOptions = DEFAULT_CHUNKER_OPTIONS,
): Chunk[] {
  if (!(options.maxTokens >= MIN_MAX_TOKENS)) {
    throw new RangeError(`maxTokens must be at least ${MIN_MAX_TOKENS}, not ${options.maxTokens}`);
  }
  const blocks = parseBlocks(body);
  const packed = pack(blocks, options, title);
  return packed.map((chunk, index) => ({ ...chunk, index }));
}

/** The line embedded before a chunk's content: title and heading path, without repeats. */
export function contextLine(title: string, headings: readonly string[]): string {
  const parts = [...headings];
  if (title !== '' && parts[0] !== title) parts.unshift(title);
  return parts.join(' › ');
}

/**
 * The document's blocks: headings and fenced code as marked's lexer reads them (the parser
 * the search snippets and the console use, so that a chunk's headings are the ones a reader
 * sees: not a heading inside a list item, not a lone `-` under a list), and between them
 * paragraphs, one per run of lines between blank lines, as the packing below takes them.
 * Fenced code inside a list item is a code block of its own too, its lines as they stand.
 * Indented code is packed as prose: it may be cut at lines.
 */
function parseBlocks(body: string): Block[] {
  const source = body.replace(/\r\n?/g, '\n');
  const blocks: Block[] = [];
  const path: { level: number; text: string }[] = [];
  const headings = () => path.map((h) => h.text);
  // The source of the blocks read since the last heading or code block, and its code.
  let run = '';
  let code: string[] = [];

  const flushRun = () => {
    for (const part of runParts(run, code)) {
      blocks.push({
        kind: part.code ? 'code' : 'paragraph',
        text: part.text,
        tokens: 0,
        headings: headings(),
      });
    }
    run = '';
    code = [];
  };

  for (const token of blockTokens(source)) {
    if (token.type === 'heading') {
      flushRun();
      const { depth, text } = token as Tokens.Heading;
      while (path.length > 0 && path[path.length - 1].level >= depth) path.pop();
      const name = text.replace(/\n/g, ' ').trim();
      if (name !== '') path.push({ level: depth, text: name });
      blocks.push({ kind: 'heading', text: token.raw.trim(), tokens: 0, headings: headings() });
    } else if (isFenced(token)) {
      flushRun();
      const text = token.raw.replace(/^\n+|\s+$/g, '');
      blocks.push({ kind: 'code', text, tokens: 0, headings: headings() });
    } else {
      run += token.raw;
      code.push(...nestedCode(token));
    }
  }
  flushRun();
  for (const block of blocks) block.tokens = countTokens(block.text);
  return blocks;
}

function isFenced(token: Token): token is Tokens.Code {
  return token.type === 'code' && (token as Tokens.Code).codeBlockStyle !== 'indented';
}

/** The fenced code inside a list or quote, in order, as marked gives it (without the indent). */
function nestedCode(token: Token): string[] {
  if (isFenced(token)) return [token.raw.replace(/^\n+|\s+$/g, '')];
  const children: Token[] =
    token.type === 'list'
      ? (token as Tokens.List).items
      : 'tokens' in token
        ? (token.tokens ?? [])
        : [];
  return children.flatMap(nestedCode);
}

/**
 * A run cut into paragraphs at blank lines, the lines of the fenced code marked found in it
 * taken out whole as code (found by their fence line, in order; code whose lines carry a
 * prefix, as in a quote, is not found and stays prose).
 */
function runParts(run: string, code: readonly string[]): { text: string; code: boolean }[] {
  const lines = run.split('\n');
  const spans: { start: number; end: number }[] = [];
  let from = 0;
  for (const block of code) {
    const inner = block.split('\n');
    const fence = inner[0].trim();
    for (let i = from; i + inner.length <= lines.length; i++) {
      if (lines[i].trim() === fence) {
        spans.push({ start: i, end: i + inner.length });
        from = i + inner.length;
        break;
      }
    }
  }
  const parts: { text: string; code: boolean }[] = [];
  const prose = (text: string) => {
    for (const part of text.split(BLANK_LINE)) {
      const trimmed = part.trim();
      if (trimmed !== '') parts.push({ text: trimmed, code: false });
    }
  };
  let at = 0;
  for (const span of spans) {
    prose(lines.slice(at, span.start).join('\n'));
    parts.push({
      text: lines.slice(span.start, span.end).join('\n').replace(/\s+$/, ''),
      code: true,
    });
    at = span.end;
  }
  prose(lines.slice(at).join('\n'));
  return parts;
}

const BLANK_LINE = /\n[ \t]*\n/;

/**
 * marked's block tokens of `source`, without the inline pass (nothing here reads inside a
 * paragraph). Should the lexer ever fail, the whole text is one run of paragraphs: a
 * document is always chunked.
 */
function blockTokens(source: string): Token[] {
  try {
    return new Lexer({ gfm: true }).blockTokens(source, []);
  } catch {
    return [{ type: 'paragraph', raw: source, text: source, tokens: [] }];
  }
}

/** The context line embedded before a chunk's content, and its tokens. */
interface Context {
  line: string;
  tokens: number;
}

/** Per heading path: its context line, and the room left for content (`max`, `target`). */
interface Budget {
  context: Context;
  max: number;
  target: number;
}

interface Draft {
  headings: string[];
  parts: Block[];
  tokens: number;
}

function pack(blocks: Block[], options: ChunkerOptions, title: string): Omit<Chunk, 'index'>[] {
  const chunks: Omit<Chunk, 'index'>[] = [];
  let draft: Draft | undefined;

  // The context line takes part of every input; the content gets what is left.
  const budgets = new Map<string, Budget>();
  const budget = (headings: string[]): Budget => {
    const line = contextLine(title, headings);
    let known = budgets.get(line);
    if (!known) {
      const context = fittedContext(line, options.maxTokens);
      const overhead = context.line === '' ? 0 : context.tokens + SEPARATOR_TOKENS;
      const max = Math.max(16, options.maxTokens - overhead);
      known = { context, max, target: Math.min(options.targetTokens, max) };
      budgets.set(line, known);
    }
    return known;
  };

  const flush = (withOverlap: boolean): string | undefined => {
    if (!draft || draft.parts.length === 0) return undefined;
    const content = draft.parts
      .map((p, i) => (i === 0 ? p.text : `${p.continues ?? '\n\n'}${p.text}`))
      .join('');
    const { context } = budget(draft.headings);
    emit(chunks, content, draft.headings, context, options.maxTokens, draft.tokens);
    const last = draft.parts[draft.parts.length - 1];
    draft = undefined;
    return withOverlap && options.overlapTokens > 0 && last.kind === 'paragraph'
      ? tailTokens(last.text, options.overlapTokens)
      : undefined;
  };
  const start = (headings: string[], overlap: string | undefined) => {
    draft = { headings, parts: [], tokens: 0 };
    if (overlap) {
      draft.parts.push({
        kind: 'paragraph',
        text: overlap,
        tokens: countTokens(overlap),
        headings,
      });
      draft.tokens = draft.parts[0].tokens;
    }
  };
  const add = (block: Block) => {
    draft!.parts.push(block);
    draft!.tokens += block.tokens + (draft!.parts.length > 1 ? SEPARATOR_TOKENS : 0);
  };

  for (const block of blocks) {
    const { max, target } = budget(block.headings);
    if (block.kind === 'heading' && draft && draft.tokens >= target / 4) flush(false);

    const pieces =
      block.kind === 'code' && block.tokens <= max
        ? [block]
        : block.tokens > target
          ? splitBlock(block, target)
          : [block];
    for (const piece of pieces) {
      if (!draft) start(piece.headings, undefined);
      const room = (draft!.parts.length > 0 ? SEPARATOR_TOKENS : 0) + piece.tokens;
      // A piece that does not fit closes the chunk; a code block that fits one input goes
      // to a chunk of its own rather than being cut.
      const fits =
        draft!.tokens + room <= target || (draft!.parts.length === 0 && piece.tokens <= max);
      if (!fits) {
        // Code is never repeated as overlap: a half-repeated block reads as broken code.
        const overlap = flush(piece.kind !== 'code');
        start(piece.headings, overlap);
        if (draft!.tokens + SEPARATOR_TOKENS + piece.tokens > target)
          start(piece.headings, undefined);
      }
      add(piece);
    }
  }
  flush(false);
  return chunks;
}

/**
 * The context line as embedded: whole when it takes at most half of the input, else cut to
 * that half, so that the content always has room. A heading can be a paragraph long (a
 * README's first heading full of badge links, a list taken for a setext heading): embedded
 * whole it left no room, and no cut of the content could make the chunk fit.
 */
function fittedContext(line: string, maxTokens: number): Context {
  const tokens = countTokens(line);
  const most = Math.floor(maxTokens / 2);
  if (tokens <= most) return { line, tokens };
  const head = fittingHead(line, most, countTokens, most);
  return head ? { line: head.text, tokens: head.tokens } : { line: '', tokens: 0 };
}

/**
 * Adds one chunk. `estimate` (the counts of its parts plus separators) is used as the count
 * when it is well under the hard limit; near the limit the joined text is counted exactly
 * and, when it is over, the content is cut by tokens (or by characters inside a word) into
 * as many chunks as it takes, each counted again before it is kept.
 */
function emit(
  chunks: Omit<Chunk, 'index'>[],
  content: string,
  headings: string[],
  context: Context,
  maxTokens: number,
  estimate = Infinity,
): void {
  const prefix = context.line === '' ? '' : `${context.line}\n\n`;
  const overhead = context.line === '' ? 0 : context.tokens + SEPARATOR_TOKENS;
  if (overhead + estimate <= maxTokens * ESTIMATE_TRUSTED) {
    chunks.push({ headings, content, text: prefix + content, tokens: overhead + estimate });
    return;
  }
  const measure = (head: string) => countTokens(prefix + head);
  let rest = content;
  while (rest !== '') {
    const tokens = measure(rest);
    if (tokens <= maxTokens) {
      chunks.push({ headings, content: rest, text: prefix + rest, tokens });
      return;
    }
    rest = rest.trimStart();
    const room = maxTokens - (measure(rest) - countTokens(rest));
    const head = fittingHead(rest, room, measure, maxTokens);
    // Unreachable while the context takes at most half an input of 16 tokens or more (one
    // character is at most 4 tokens, 6 after the separator); a guard, not a loop.
    if (!head) throw new Error(`chunker: not one character fits an input of ${maxTokens} tokens`);
    chunks.push({ headings, content: head.text, text: prefix + head.text, tokens: head.tokens });
    rest = rest.slice(head.length).trim();
  }
}

/**
 * The start of `text`, trimmed, that {@link splitAtTokens} cuts at `room` tokens, taken again
 * with less room while `measure` of it is over `limit` (the tokenizer counts a piece alone a
 * token or so differently than inside the text). `length` is the part of `text` it used; it
 * is never 0. `undefined` when not even one character is within `limit`.
 */
function fittingHead(
  text: string,
  room: number,
  measure: (head: string) => number,
  limit: number,
): { text: string; tokens: number; length: number } | undefined {
  for (;;) {
    const [cut] = splitAtTokens(text, Math.max(1, room));
    const head = cut.trim();
    const tokens = measure(head);
    if (head !== '' && tokens <= limit) return { text: head, tokens, length: cut.length };
    if (room <= 1) return undefined;
    room -= Math.max(1, tokens - limit);
  }
}

/** Cuts one block into pieces of at most `target` tokens. */
function splitBlock(block: Block, target: number): Block[] {
  if (block.kind === 'code') return splitCode(block, target);
  return regroup(splitSentences(block.text), '', target, block);
}

/** Code too long for one input: cut at lines, each piece re-fenced so it stays code. */
function splitCode(block: Block, target: number): Block[] {
  const lines = block.text.split('\n');
  const open = lines[0];
  const fence = FENCE_OPEN.exec(open)![1];
  const closed =
    lines.length > 1 &&
    new RegExp(`^[ \\t]*${fence[0]}{${fence.length},}`).test(lines[lines.length - 1]);
  const inner = lines.slice(1, closed ? -1 : undefined);
  const wrapTokens = countTokens(`${open}\n\n${fence}`);
  const pieces = regroup(inner, '\n', Math.max(16, target - wrapTokens), block);
  return pieces.map((piece) => {
    const text = `${open}\n${piece.text}\n${fence}`;
    return { ...piece, kind: 'code' as const, text, tokens: countTokens(text) };
  });
}

/** Packs `units` (sentences or lines) joined by `joiner` into pieces of at most `target` tokens. */
function regroup(units: string[], joiner: string, target: number, block: Block): Block[] {
  const pieces: Block[] = [];
  let current: string[] = [];
  let tokens = 0;
  const push = (continues?: string) => {
    if (current.length === 0) return;
    const joined = current.join(joiner);
    // Indentation is meaningful in code; prose loses only its outer whitespace.
    const text = block.kind === 'code' ? joined : joined.trim();
    if (text.trim() !== '') {
      const piece: Block = {
        kind: block.kind,
        text,
        tokens: countTokens(text),
        headings: block.headings,
      };
      pieces.push(continues === undefined ? piece : { ...piece, continues });
    }
    current = [];
    tokens = 0;
  };
  for (const unit of units) {
    const unitTokens = countTokens(unit);
    if (unitTokens > target) {
      // One sentence or line longer than a piece: cut it by tokens, its pieces joined again
      // as they were where they meet in a chunk (a badge line cut inside a URL stays one word).
      push();
      let before: string | undefined;
      for (const part of splitByTokens(unit, target)) {
        current = [part];
        const cutAtSpace = before !== undefined && (/\s$/.test(before) || /^\s/.test(part));
        push(before === undefined || block.kind === 'code' ? undefined : cutAtSpace ? ' ' : '');
        before = part;
      }
      continue;
    }
    if (tokens + unitTokens + 1 > target) push();
    current.push(unit);
    tokens += unitTokens + 1;
  }
  push();
  return pieces;
}

/**
 * Sentences and lines, each keeping its trailing whitespace, so that joining them back
 * with '' gives the original text.
 */
function splitSentences(text: string): string[] {
  return text.split(/(?<=[.!?]["')\]]*[ \t]+|\n)/).filter((s) => s !== '');
}
