import { createHash } from 'node:crypto';
import { stemmer as arabicStem } from '@orama/stemmers/arabic';
import { stemmer as russianStem } from '@orama/stemmers/russian';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import englishStem from 'wink-porter2-stemmer';

/**
 * The text analysis of the lexical index, one function for documents and queries alike (so
 * a query's terms are spelled as the index's). Unicode-aware and pure; no database round
 * trip. Bump {@link ANALYZER_VERSION} when a term would come out differently: every
 * document's lexical record is written again (its vectors are kept: no embedder reads this).
 *
 * - NFKC, lower case; Latin letters lose their accents (`é` → `e`, `ß` → `ss`) so accented
 *   Latin meets its unaccented spelling; other scripts keep theirs.
 * - A run of Han, Hiragana, Katakana or Hangul becomes overlapping character bigrams, as
 *   Lucene's CJK analyzer does (a lone character is a unigram): `東京の天気` → `東京` `京の`
 *   `の天` `天気`, so `東京` and `天気` find it.
 * - A compound token, letters and digits joined by `.` `_` `-` `/` `:` `@` (identifiers,
 *   paths, error codes, versions), is one exact term as written (lower case); so is each
 *   camelCase part of it; and its words are analysed as words.
 * - A word: an English stop word stays as it is, marked (a query of stop words alone still
 *   finds documents holding them); a Latin word gets its Porter2 (Snowball English) stem,
 *   a Cyrillic word its Russian stem, an Arabic word its Arabic stem; anything else (digits,
 *   other scripts) stays as written.
 * - A command-line option (`--max-old-space-size`, `-rf`, `--format=json`), written after
 *   a space or punctuation, is also an exact term with its dashes, and with its value when it
 *   has one: `--all` and `-a` are options, not the stop words `all` and `a`, and a query
 *   naming an option finds the documents that name it before those that use its words.
 * - An abbreviation, single letters joined by dots and ending in one (`e.g.`, `U.S.`, `a.m.`;
 *   `x.y` in code is a compound), is one word of its letters (`eg`, `us`, `am`) beside its
 *   exact spelling, not a run of one-letter words:
 *   a letter alone is rare as a word, so `e` and `g` made a question written with "e.g." match
 *   documents on them. `e.g.` and `i.e.` themselves are stop words.
 * - A term over {@link MAX_TERM_BYTES} is cut and suffixed with a hash of the whole: a
 *   2 000-character identifier is one exact term of bounded size.
 * - A word over {@link MAX_STEMMED_CHARS} characters is not stemmed: no language has such
 *   words, and the stemmers' regular expressions take time in the square of a word's length
 *   (a line of 100 000 letters held the indexing of every later document for minutes).
 */
export const ANALYZER_VERSION = 4;

/** Longest term kept whole, in UTF-8 bytes. */
export const MAX_TERM_BYTES = 64;
/** Longest word stemmed, in UTF-16 code units (a stem costs some 0.1 ms at this length). */
export const MAX_STEMMED_CHARS = 64;
/** Parts of one compound token analysed at most (a 10 000-part path is not 10 000 words). */
const MAX_PARTS = 64;

const STOP = new Set(ENGLISH_STOP_WORDS);
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}';
const WORD_CHAR = `[^\\s${CJK}\\p{P}\\p{S}\\p{C}\\p{Z}]|_`;
/** A CJK run, or a compound: word characters joined by single connectors. */
const TOKEN = new RegExp(`([${CJK}]+)|((?:${WORD_CHAR})+(?:[._\\-/:@](?:${WORD_CHAR})+)*)`, 'gu');
const CONNECTORS = /[._\-/:@]+/u;
const CONNECTOR = /[._\-/:@]/;
/** Single letters joined by dots: `e.g`, `U.S.A` (the token ends before a final dot). */
const INITIALISM = /^\p{L}(?:\.\p{L})+$/u;
/** Abbreviations written as function words, whose letters are stop words. */
const STOP_ABBREVIATIONS = new Set(['eg', 'ie']);
const LATIN_WORD = /^\p{Script=Latin}+$/u;
const CYRILLIC_WORD = /^\p{Script=Cyrillic}+$/u;
const ARABIC_WORD = /^\p{Script=Arabic}+$/u;
/**
 * A command-line option: one or two dashes not joined to a word before them, a name of
 * letters, digits and `_ . -` (not ending in `.` or `-`), and an optional `=value`.
 */
const OPTION =
  /(?<![\p{L}\p{N}_-])(--?[\p{L}\p{N}](?:[\p{L}\p{N}_.-]*[\p{L}\p{N}_])?)(=[^\s'"`,;)\]}<>|]+)?/gu;
/** Arabic diacritics (harakat) and the tatweel, dropped before stemming. */
const ARABIC_MARKS = /[\u064b-\u065f\u0670\u0640]/gu;

/** One term of a text: `stop` for an English stop word; `word` when it stands for a word. */
export type TermSink = (term: string, stop: boolean, word: boolean) => void;

/** Calls `emit` for each term of `text`, in order (a text's options after its words). */
export function analyze(text: string, emit: TermSink): void {
  const normalized = text.normalize('NFKC');
  for (const match of normalized.matchAll(TOKEN)) {
    if (match[1] !== undefined) {
      const run = [...match[1]];
      if (run.length === 1) emit(run[0], false, true);
      else for (let i = 0; i + 1 < run.length; i++) emit(run[i] + run[i + 1], false, true);
      continue;
    }
    for (const [term, stop, word] of termsOfMatch(normalized, match)) emit(term, stop, word);
  }
  if (!normalized.includes('-')) return;
  for (const [, name, value] of normalized.matchAll(OPTION)) {
    const option = fold(name.toLowerCase());
    emit(bounded(option), false, false);
    if (value !== undefined) emit(bounded(option + fold(value.toLowerCase())), false, false);
  }
}

/** A token's terms as `analyze` emits them: the term, whether a stop word, whether a word. */
type TokenTerm = readonly [string, boolean, boolean];

/**
 * The terms of one token (a compound or a word), remembered: a token's terms depend on it
 * alone, and a corpus says its words again and again, so most tokens of a document cost one
 * lookup rather than a dozen Unicode regular expressions (the analysis was most of the time a
 * restore took to index its documents lexically).
 */
function tokenTerms(token: string): readonly TokenTerm[] {
  let found = tokens.get(token);
  if (found === undefined) {
    found = analyzeToken(token);
    if (token.length <= TOKEN_KEPT_CHARS) {
      if (tokens.size >= TOKENS_KEPT) tokens.clear();
      tokens.set(token, found);
    }
  }
  return found;
}

const tokens = new Map<string, readonly TokenTerm[]>();
/**
 * Tokens remembered at most, each at most TOKEN_KEPT_CHARS long (long identifiers seldom
 * repeat): a few megabytes, within a chunking thread's small heap.
 */
const TOKENS_KEPT = 50_000;
const TOKEN_KEPT_CHARS = 40;

/**
 * The terms of a compound or word token found in `text`: an abbreviation's when its single
 * letters are joined by dots and a dot follows it (`e.g.`; `x.y` in code is a compound).
 */
function termsOfMatch(
  text: string,
  match: RegExpExecArray | RegExpMatchArray,
): readonly TokenTerm[] {
  const token = match[2];
  if (text[match.index! + match[0].length] === '.' && INITIALISM.test(token)) {
    const letters = bounded(fold(token.replace(/\./g, '').toLowerCase()));
    if (STOP_ABBREVIATIONS.has(letters)) return [[letters, true, true]];
    return [
      [letters, STOP.has(letters), true],
      [bounded(fold(token.toLowerCase())), false, false],
    ];
  }
  return tokenTerms(token);
}

function analyzeToken(token: string): TokenTerm[] {
  const out: TokenTerm[] = [];
  const parts = CONNECTOR.test(token) ? token.split(CONNECTORS).filter((p) => p !== '') : [token];
  let words = 0;
  for (const part of parts.slice(0, MAX_PARTS)) {
    const pieces = camelPieces(part);
    if (pieces.length > 1 && parts.length > 1)
      out.push([bounded(fold(part.toLowerCase())), false, false]);
    for (const piece of pieces.slice(0, MAX_PARTS)) {
      const word = fold(piece.toLowerCase()).replace(/_/g, '');
      if (word === '') continue;
      words++;
      if (STOP.has(word)) out.push([word, true, true]);
      else out.push([bounded(stemOf(word)), false, true]);
    }
  }
  if (words > 1) out.push([bounded(fold(token.toLowerCase())), false, false]);
  return out;
}

/** A text's term frequencies, and its length in words that are not stop words. */
export function termCounts(text: string): { tf: Map<string, number>; length: number } {
  const tf = new Map<string, number>();
  let length = 0;
  analyze(text, (term, stop, word) => {
    tf.set(term, (tf.get(term) ?? 0) + 1);
    if (word && !stop) length++;
  });
  return { tf, length };
}

/** A query's terms, each once with how often the query says it. */
export interface QueryTerms {
  readonly terms: ReadonlyMap<string, number>;
  /** True when the query holds nothing but stop words: then they are its terms. */
  readonly stopWordsOnly: boolean;
  /**
   * The terms that are only a word as written (`promises` beside its stem `promis`): another
   * spelling of a term already asked for, never looked for inside compounds.
   */
  readonly written: ReadonlySet<string>;
}

/**
 * The terms of a query: those of its analysis, stop words left out unless they are all it
 * has, and each word also as written in lower case when that differs (`maxretries`, typed
 * in lower case, meets the identifier `maxRetries`).
 */
export function queryTerms(text: string): QueryTerms {
  const terms = new Map<string, number>();
  const stops = new Map<string, number>();
  analyze(text, (term, stop) => {
    const into = stop ? stops : terms;
    into.set(term, (into.get(term) ?? 0) + 1);
  });
  const written = new Set<string>();
  if (terms.size === 0) return { terms: stops, stopWordsOnly: stops.size > 0, written };
  const normalized = text.normalize('NFKC');
  for (const match of normalized.matchAll(TOKEN)) {
    if (match[2] === undefined) continue;
    const word = bounded(fold(match[2].toLowerCase()));
    if (terms.has(word) || termsOfMatch(normalized, match).every(([, stop]) => stop)) continue;
    terms.set(word, 1);
    written.add(word);
  }
  return { terms, stopWordsOnly: false, written };
}

/**
 * camelCase, PascalCase and ACRONYMWord pieces of one part: `maxRetries` → `max`, `Retries`.
 * Every split falls before an upper-case letter that is not the first: a part with none (most
 * words of prose) is one piece, without the three replacements.
 */
export function camelPieces(part: string): string[] {
  if (!UPPER.test(part.slice(1))) return part === '' ? [] : [part];
  return part
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1\u0000$2')
    .replace(/(\p{N})(\p{Lu}\p{Ll})/gu, '$1\u0000$2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1\u0000$2')
    .split('\u0000')
    .filter((piece) => piece !== '');
}

const UPPER = /\p{Lu}/u;

/** Latin letters without their accents; other scripts as they are. */
function fold(text: string): string {
  if (/^[\x00-\x7f]*$/.test(text)) return text;
  return text
    .replace(/ß/g, 'ss')
    .replace(/æ/g, 'ae')
    .replace(/ø/g, 'o')
    .replace(/œ/g, 'oe')
    .replace(/\p{Script=Latin}\p{M}*/gu, (c) => c.normalize('NFD').replace(/\p{M}+/gu, ''));
}

const stems = new Map<string, string>();
/** Stems are remembered (a corpus repeats its words): at most this many. */
const STEMS_KEPT = 200_000;

function stemOf(word: string): string {
  if (word.length > MAX_STEMMED_CHARS) return word;
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = stemWord(word);
    if (stems.size >= STEMS_KEPT) stems.clear();
    stems.set(word, stem);
  }
  return stem;
}

function stemWord(word: string): string {
  if (word.length <= 2) return word;
  if (LATIN_WORD.test(word)) return englishStem(word);
  if (CYRILLIC_WORD.test(word)) return russianStem(word);
  if (ARABIC_WORD.test(word)) return arabicStem(word.replace(ARABIC_MARKS, '')) || word;
  return word;
}

/** `term`, or its first 32 characters and a hash of the whole when it is too long. */
function bounded(term: string): string {
  if (term.length <= MAX_TERM_BYTES / 3 || Buffer.byteLength(term) <= MAX_TERM_BYTES) return term;
  let head = '';
  let count = 0;
  for (const character of term) {
    if (count++ === 32) break;
    head += character;
  }
  return `${head}#${createHash('sha1').update(term).digest('hex').slice(0, 16)}`;
}
