import { tokenize } from '../embedders/feature-hashing';
import { analyze } from '../text/analyzer';
import { plainText } from './plain-text';

export const SNIPPET_MAX_CHARS = 300;
/** Text kept before the first query word, so the snippet starts with some context. */
const LEAD_CHARS = 60;

/**
 * A short excerpt of a chunk for a search result: its markdown read as the text a reader
 * sees (plain-text.ts: no `#`, `|---|` or `**`), whitespace collapsed, at most
 * `maxChars` characters, starting a little before the first word of the query found in it
 * (from the start when none is), cut at word boundaries and marked with `…` where cut.
 */
export function snippetOf(content: string, query: string, maxChars = SNIPPET_MAX_CHARS): string {
  const text = plainText(content);
  if (text.length <= maxChars) return text;

  const lower = text.toLowerCase();
  let first = -1;
  for (const word of tokenize(query)) {
    if (word.length < 3) continue;
    const at = lower.indexOf(word);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  let start = first <= LEAD_CHARS ? 0 : first - LEAD_CHARS;
  if (start > 0) {
    const space = text.indexOf(' ', start);
    start = space >= 0 && space < first ? space + 1 : start;
  }
  start = Math.min(start, Math.max(0, text.length - maxChars + 1));

  const lead = start > 0 ? '…' : '';
  let end = start + maxChars - lead.length;
  let tail = '';
  if (end < text.length) {
    end -= 1;
    const space = text.lastIndexOf(' ', end);
    if (space > start + maxChars / 2) end = space;
    tail = '…';
  }
  return `${lead}${text.slice(start, end).trim()}${tail}`;
}

/**
 * `snippet` with the words the lexical search matched in `**bold**`: a word is marked when
 * one of its terms (as the analyzer gives them: `restoring` → `restor`, `東京の天気` → its
 * bigrams) is one of the query's `terms`.
 */
export function highlight(snippet: string, terms: readonly string[]): string {
  if (terms.length === 0) return snippet;
  const wanted = new Set(terms);
  return snippet.replace(WORD_OR_ABBREVIATION, (word) =>
    termsOfWord(word).some((term) => wanted.has(term)) ? `**${word}**` : word,
  );
}

/**
 * A word, or an abbreviation whole (single letters joined by dots and ending in one: `U.S.A.`,
 * `a.m.`), which the analyzer reads as one word of its letters (`usa`, `am`).
 */
const WORD_OR_ABBREVIATION = /(?<![\p{L}\p{N}.])\p{L}(?:\.\p{L})+\.|[\p{L}\p{N}]+/gu;

/** Words whose terms are remembered: the words of results repeat from one search to the next. */
const REMEMBERED_WORDS = 50_000;
const wordTerms = new Map<string, readonly string[]>();

/** One word's terms, as the analyzer gives them. */
function termsOfWord(word: string): readonly string[] {
  let terms = wordTerms.get(word);
  if (terms === undefined) {
    const found: string[] = [];
    analyze(word, (term) => found.push(term));
    terms = found;
    if (wordTerms.size >= REMEMBERED_WORDS) wordTerms.clear();
    if (word.length <= 64) wordTerms.set(word, terms);
  }
  return terms;
}
