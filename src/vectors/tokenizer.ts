import { getEncoding, Tiktoken } from 'js-tiktoken';

let encoder: Tiktoken | undefined;

/**
 * The `cl100k_base` encoding of OpenAI's embedding models, loaded from the package itself
 * (no network). Loading parses about a megabyte of ranks (~0.4 s), so it happens once, on
 * first use or when {@link warmTokenizer} is called at start-up.
 */
function tokenizer(): Tiktoken {
  encoder ??= getEncoding('cl100k_base');
  return encoder;
}

/** Loads the encoding now, so the first document synchronised does not pay for it. */
export function warmTokenizer(): void {
  tokenizer();
}

/**
 * Text the byte-pair encoder is not given: runs of letters (or of punctuation) longer than
 * MAX_RUN, whose merge is quadratic in the run's length (4 000 letters in a row take over a
 * second, so one such "word" could stall the process), and any run without whitespace
 * longer than MAX_WORD (base64 data, minified code: random text encodes at ~150 KB/s).
 * Such a run counts as one token per UTF-8 byte instead, an upper bound, so limits stay safe.
 */
const MAX_RUN = 40;
const MAX_WORD = 200;
const LONG_RUN = new RegExp(
  `\\S{${MAX_WORD + 1},}|[\\p{L}\\p{M}]{${MAX_RUN + 1},}|[^\\s\\p{L}\\p{N}]{${MAX_RUN + 1},}`,
  'gu',
);

/** A stretch of text with its tokens, or (a long run) with its byte count as the cost. */
interface Segment {
  readonly text: string;
  readonly tokens: number[] | null;
  readonly cost: number;
}

function segments(text: string): Segment[] {
  const result: Segment[] = [];
  const plain = (part: string) => {
    if (part === '') return;
    const tokens = tokenizer().encode(part);
    result.push({ text: part, tokens, cost: tokens.length });
  };
  let at = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    plain(text.slice(at, match.index));
    result.push({ text: match[0], tokens: null, cost: Buffer.byteLength(match[0], 'utf8') });
    at = match.index + match[0].length;
  }
  plain(text.slice(at));
  return result;
}

/** Number of cl100k tokens of `text` (an upper bound when it holds very long runs). */
export function countTokens(text: string): number {
  if (text === '') return 0;
  return segments(text).reduce((sum, s) => sum + s.cost, 0);
}

/**
 * Words with the whitespace before them. The encoder's own pre-tokenizer never merges across
 * the start of a whitespace run that follows a non-space, so token counts of consecutive
 * words add up to the count of their concatenation, and cutting between words never cuts a
 * character.
 */
const WORDS = /\s*\S+|\s+/g;

/** `text` cut, in one pass, into consecutive pieces of at most `maxTokens` tokens each. */
export function splitByTokens(text: string, maxTokens: number): string[] {
  const pieces: string[] = [];
  let piece = '';
  let budget = maxTokens;
  const close = () => {
    if (piece !== '') pieces.push(piece);
    piece = '';
    budget = maxTokens;
  };
  for (const word of text.match(WORDS) ?? []) {
    const cost = countTokens(word);
    if (cost > budget) close();
    if (cost <= budget) {
      piece += word;
      budget -= cost;
      continue;
    }
    // One word over the whole budget: cut it by UTF-8 bytes (a token is at least a byte).
    for (const char of word) {
      const bytes = Buffer.byteLength(char, 'utf8');
      if (bytes > budget) close();
      piece += char;
      budget -= bytes;
    }
  }
  close();
  return pieces;
}

/** The longest prefix of `text` with at most `maxTokens` tokens (cut between words), and the rest. */
export function splitAtTokens(text: string, maxTokens: number): [string, string] {
  const head = splitByTokens(text, maxTokens)[0] ?? '';
  return [head, text.slice(head.length)];
}

/** The last words of `text` within `maxTokens` tokens, without leading whitespace. */
export function tailTokens(text: string, maxTokens: number): string {
  const words = text.match(WORDS) ?? [];
  let budget = maxTokens;
  let start = words.length;
  while (start > 0) {
    const cost = countTokens(words[start - 1]);
    if (cost > budget) break;
    budget -= cost;
    start--;
  }
  return words.slice(start).join('').trimStart();
}
