import { analyze } from '../text/analyzer';

/**
 * What the lexical index keeps of one document, computed where the document is chunked (a
 * worker thread) and stored in PostgreSQL (`kb_lexical_documents`): for each of its terms,
 * how often it occurs in the title, in the headings and in the body, and which passage holds
 * it best; the length of each field and of each passage, in words that are not stop words.
 */
export interface LexicalRecord {
  /** The document's distinct terms (see analyzer.ts). */
  readonly terms: readonly string[];
  /**
   * Per term: its count in the title (bits 0-7), in the headings (8-15) and in the body
   * (16-31), each capped at its width.
   */
  readonly fields: Int32Array;
  /**
   * Per term: the index of the passage that holds it best (bits 0-15), its count there
   * (16-27), and its count in the anchor field (28-31: see {@link withAnchorField}).
   */
  readonly passages: Int32Array;
  /** Words in the title, the headings, the body and the anchor field. */
  readonly lengths: readonly [number, number, number, number];
  /** Words in each passage (heading path and content), by passage index. */
  readonly passageLengths: readonly number[];
}

/** One passage as the chunker cut it. */
export interface RecordPassage {
  readonly headings: readonly string[];
  readonly content: string;
}

const K1 = 1.2;
const B = 0.75;

/**
 * The record of a document: the title, the document's headings (each heading of its
 * passages' heading paths, once) and its body are the three fields; a passage is its
 * heading path and its content. A term's best passage is the one where its BM25 share is
 * highest, lengths compared with the document's own mean passage length.
 */
export function lexicalRecord(
  title: string,
  body: string,
  passages: readonly RecordPassage[],
): LexicalRecord {
  const index = new Map<string, number>();
  const terms: string[] = [];
  const counts: number[][] = [];
  const slot = (term: string): number[] => {
    let at = index.get(term);
    if (at === undefined) {
      at = terms.length;
      index.set(term, at);
      terms.push(term);
      counts.push([0, 0, 0]);
    }
    return counts[at];
  };
  const headings = [...new Set(passages.flatMap((p) => p.headings))].join('\n');
  const lengths: [number, number, number, number] = [0, 0, 0, 0];
  [title, headings, body].forEach((text, field) =>
    analyze(text, (term, stop, word) => {
      slot(term)[field]++;
      if (word && !stop) lengths[field]++;
    }),
  );

  const perPassage: Array<Map<number, number>> = [];
  const passageLengths = passages.map((passage) => {
    const tf = new Map<number, number>();
    let length = 0;
    analyze(`${passage.headings.join('\n')}\n${passage.content}`, (term, stop, word) => {
      slot(term);
      const at = index.get(term)!;
      tf.set(at, (tf.get(at) ?? 0) + 1);
      if (word && !stop) length++;
    });
    perPassage.push(tf);
    return length;
  });
  const mean = passageLengths.reduce((a, b) => a + b, 0) / Math.max(1, passageLengths.length) || 1;
  const best = new Float64Array(terms.length);
  const passageOf = new Int32Array(terms.length);
  perPassage.forEach((tf, p) => {
    const norm = K1 * (1 - B + (B * passageLengths[p]) / mean);
    for (const [at, count] of tf) {
      const share = count / (count + norm);
      if (share > best[at]) {
        best[at] = share;
        passageOf[at] = Math.min(p, 0xffff) | (Math.min(count, 0xfff) << 16);
      }
    }
  });
  const fields = new Int32Array(terms.length);
  counts.forEach(([t, h, b], at) => {
    fields[at] = Math.min(t, 0xff) | (Math.min(h, 0xff) << 8) | (Math.min(b, 0xffff) << 16);
  });
  return { terms, fields, passages: passageOf, lengths, passageLengths };
}

/**
 * The anchor field of a document: the words of the texts of the links that point at it (those
 * a shared index may use: docs/search.md, "Anchor text"), each term with how often they say
 * it (terms sorted; counts capped at 255, as stored), and their length in words that are not
 * stop words.
 */
export interface AnchorField {
  readonly terms: readonly string[];
  readonly counts: readonly number[];
  readonly length: number;
}

/** The anchor field of links with these texts. */
export function anchorFieldOf(labels: readonly string[]): AnchorField {
  const counts = new Map<string, number>();
  let length = 0;
  for (const label of labels) {
    analyze(label, (term, stop, word) => {
      counts.set(term, (counts.get(term) ?? 0) + 1);
      if (word && !stop) length++;
    });
  }
  const terms = [...counts.keys()].sort();
  return { terms, counts: terms.map((term) => Math.min(counts.get(term)!, 0xff)), length };
}

/** Whether two anchor fields are the same. */
export function sameAnchorField(a: AnchorField, b: AnchorField): boolean {
  return (
    a.length === b.length &&
    a.terms.length === b.terms.length &&
    a.terms.every((term, i) => term === b.terms[i] && a.counts[i] === b.counts[i])
  );
}

/** Anchor terms found in a record by a linear search each; more, through a map of its terms. */
const FEW_ANCHOR_TERMS = 8;

/**
 * A record with an anchor field: each of its terms counted in the passage word's top bits
 * (capped at 15; the index keeps 3), a term only the links say added with no other count
 * (the document then holds it), and the field's length as the fourth.
 */
export function withAnchorField(record: LexicalRecord, field: AnchorField): LexicalRecord {
  if (field.terms.length === 0) return record;
  // Where each of the field's terms is among the record's, or after them when the record does
  // not hold it. A field mostly has a few terms and a record hundreds: those are searched for
  // rather than the record's terms mapped (a rebuild from the records does this for every
  // linked document).
  let position = (term: string) => record.terms.indexOf(term);
  if (field.terms.length > FEW_ANCHOR_TERMS) {
    const mapped = new Map(record.terms.map((term, i) => [term, i]));
    position = (term) => mapped.get(term) ?? -1;
  }
  const at = field.terms.map(position);
  const added: string[] = [];
  at.forEach((i, k) => {
    if (i < 0) at[k] = record.terms.length + added.push(field.terms[k]) - 1;
  });
  const size = record.terms.length + added.length;
  const fields = new Int32Array(size);
  fields.set(record.fields);
  const passages = new Int32Array(size);
  passages.set(record.passages);
  field.terms.forEach((_, k) => {
    const i = at[k];
    passages[i] = (passages[i] & 0x0fffffff) | (Math.min(field.counts[k], 0xf) << 28);
  });
  const [title, headings, body] = record.lengths;
  return {
    terms: [...record.terms, ...added],
    fields,
    passages,
    lengths: [title, headings, body, field.length],
    passageLengths: record.passageLengths,
  };
}

/** An anchor field's counts as stored: a byte a term. */
export function encodeAnchorCounts(field: AnchorField): Buffer {
  return Buffer.from(field.counts.map((count) => Math.min(count, 0xff)));
}

/** A record's per-term numbers as stored: `fields` then `passages`, little-endian int32. */
export function encodePostings(record: LexicalRecord): Buffer {
  const buffer = Buffer.alloc(record.terms.length * 8);
  record.fields.forEach((v, i) => buffer.writeInt32LE(v, i * 4));
  const half = record.terms.length * 4;
  record.passages.forEach((v, i) => buffer.writeInt32LE(v, half + i * 4));
  return buffer;
}

/** The inverse of {@link encodePostings}. */
export function decodePostings(
  buffer: Buffer,
  terms: number,
): { fields: Int32Array; passages: Int32Array } {
  if (buffer.length !== terms * 8)
    throw new Error(`postings of ${buffer.length} bytes for ${terms} terms`);
  const fields = new Int32Array(terms);
  const passages = new Int32Array(terms);
  for (let i = 0; i < terms; i++) {
    fields[i] = buffer.readInt32LE(i * 4);
    passages[i] = buffer.readInt32LE((terms + i) * 4);
  }
  return { fields, passages };
}

/** Terms as stored: one per line (the analyzer never yields whitespace in a term). */
export const joinTerms = (terms: readonly string[]): string => terms.join('\n');
export const splitTerms = (text: string): string[] => (text === '' ? [] : text.split('\n'));

/**
 * The place of `term` among terms as stored ({@link joinTerms}), -1 when absent; found without
 * splitting them (a search reads the records of the documents it shows for a few query terms:
 * the split of every record's terms was a tenth of what a search allocated).
 */
export function termIndexOf(text: string, term: string): number {
  if (term === '' || term.includes('\n')) return -1;
  for (let at = text.indexOf(term); at >= 0; at = text.indexOf(term, at + 1)) {
    const end = at + term.length;
    if (
      (at === 0 || text.charCodeAt(at - 1) === NEWLINE) &&
      (end === text.length || text.charCodeAt(end) === NEWLINE)
    ) {
      let index = 0;
      for (
        let line = text.indexOf('\n');
        line >= 0 && line < at;
        line = text.indexOf('\n', line + 1)
      )
        index++;
      return index;
    }
  }
  return -1;
}

const NEWLINE = 10;

/** The fields and passage of the `index`th of `terms` terms in postings as stored ({@link encodePostings}). */
export function postingAt(
  buffer: Buffer,
  terms: number,
  index: number,
): { fields: number; passage: number } {
  return {
    fields: buffer.readInt32LE(index * 4),
    passage: buffer.readInt32LE((terms + index) * 4),
  };
}
