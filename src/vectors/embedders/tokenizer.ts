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
 * Words with the whitespace before them. The encoder's own pre-tokenizer starts a new piece
 * where a whitespace run follows a non-space, so each of these is encoded as it would be
 * inside the whole text, except that a few merges across the cut (`.` + `\n\n`) are lost:
 * the sum of the words' counts is the text's count or a little more (about 3 % on prose),
 * never less. Cutting between words never cuts a character.
 */
const WORDS = /\s*\S+|\s+/g;

/**
 * js-tiktoken's byte-pair merge is quadratic in the length of the piece it merges (4 000
 * letters in a row take over a second) and slow on random text (~150 KB/s). So a word longer
 * than MAX_WORD characters (URLs, base64, hashes, minified code) is counted by its parts, the
 * way the encoder's pre-tokenizer splits it (letters, groups of up to three digits,
 * punctuation): parts shaped like words or numbers, and punctuation, go through the encoder
 * (and the cache); others (random-looking letter runs, parts over MAX_RUN characters) count
 * one token per UTF-8 byte. Either way the result is the encoder's count or a little more.
 */
const MAX_WORD = 48;
const MAX_RUN = 40;
const PARTS = /\s+|[\p{L}\p{M}]+|\p{N}{1,3}|[^\s\p{L}\p{M}\p{N}]+/gu;
const ENCODED_PART = /^(?:[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+|\d+|[^\s\p{L}\p{M}\p{N}]+)$/u;

/** Counts of words and parts seen: text repeats itself, and the encoder is slow (~2 MB/s). */
const counts = new Map<string, number>();
const CACHE_LIMIT = 100_000;

function cached(text: string, count: (text: string) => number): number {
  let value = counts.get(text);
  if (value === undefined) {
    value = count(text);
    if (counts.size >= CACHE_LIMIT) counts.clear();
    counts.set(text, value);
  }
  return value;
}

// Special tokens (`<|endoftext|>`) in a document are plain text, not an error.
const encodeLength = (text: string) => tokenizer().encode(text, [], []).length;

function countWord(word: string): number {
  return cached(word, () => {
    if (word.length <= MAX_WORD) return encodeLength(word);
    let total = 0;
    for (const part of word.match(PARTS) ?? []) {
      total +=
        part.length <= MAX_RUN && ENCODED_PART.test(part)
          ? cached(part, encodeLength)
          : Buffer.byteLength(part, 'utf8');
    }
    return total;
  });
}

/**
 * cl100k tokens of `text`, counted word by word with the real tokenizer: the exact count
 * or a little more (see WORDS), so limits computed from it are safe.
 */
export function countTokens(text: string): number {
  let count = 0;
  for (const word of text.match(WORDS) ?? []) count += countWord(word);
  return count;
}

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
    const cost = countWord(word);
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
    const cost = countWord(words[start - 1]);
    if (cost > budget) break;
    budget -= cost;
    start--;
  }
  return words.slice(start).join('').trimStart();
}
