import {
  admits,
  BM25_B,
  BM25_K1,
  FIELD_WEIGHTS,
  DocumentFilter,
  IndexedLexicalDocument,
  LexicalIndex,
  PASSAGE_WEIGHT,
  WeightedTerm,
} from './lexical-index';
import { anchorFieldOf, lexicalRecord, withAnchorField } from './lexical-record';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const WORDS = Array.from({ length: 60 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`);

function document(id: string, next: () => number, revision = 1): IndexedLexicalDocument {
  // Zipf-like: low word numbers are common.
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(WORDS.length * next() ** 2)]).join(' ');
  const passages = Array.from({ length: 1 + Math.floor(next() * 4) }, (_, i) => ({
    headings: [`Part ${i} ${words(2)}`],
    content: words(5 + Math.floor(next() * 30)),
  }));
  const body = passages.map((p) => `## ${p.headings[0]}\n\n${p.content}`).join('\n\n');
  const record = lexicalRecord(words(3), body, passages);
  return { documentId: id, revision, tags: next() < 0.5 ? ['red'] : ['blue'], ...record };
}

/** The formula, written out document by document from what each one holds. */
function reference(
  documents: readonly IndexedLexicalDocument[],
  query: readonly WeightedTerm[],
): Array<{ documentId: string; score: number }> {
  const n = documents.length;
  const avg = [0, 1, 2].map((f) => documents.reduce((a, d) => a + d.lengths[f], 0) / n);
  const allPassages = documents.flatMap((d) => d.passageLengths);
  const avgPassage = allPassages.reduce((a, b) => a + b, 0) / allPassages.length;
  const df = (term: string) => documents.filter((d) => d.terms.includes(term)).length;
  return documents
    .map((d) => {
      let score = 0;
      for (const { term, weight } of query) {
        const at = d.terms.indexOf(term);
        if (at < 0) continue;
        const w = Math.log(1 + (n - df(term) + 0.5) / (df(term) + 0.5)) * weight;
        const v = d.fields[at];
        const tf = [v & 0xff, (v >>> 8) & 0xff, v >>> 16];
        const x = tf.reduce(
          (sum, count, f) =>
            sum + (FIELD_WEIGHTS[f] * count) / (1 - BM25_B + (BM25_B * d.lengths[f]) / avg[f]),
          0,
        );
        const p = d.passages[at];
        const ptf = p >>> 16;
        const plen = d.passageLengths[p & 0xffff];
        const inPassage =
          (ptf * (BM25_K1 + 1)) / (ptf + BM25_K1 * (1 - BM25_B + (BM25_B * plen) / avgPassage));
        score += w * ((x * (BM25_K1 + 1)) / (BM25_K1 + x) + PASSAGE_WEIGHT * inPassage);
      }
      return { documentId: d.documentId, score: Math.round(score * 1e9) / 1e9 };
    })
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || (a.documentId < b.documentId ? -1 : 1));
}

describe('LexicalIndex', () => {
  it('returns the exact top-k of its formula, filtered or not, before and after documents are replaced and removed', () => {
    const next = random(7);
    const index = new LexicalIndex();
    const held = new Map<string, IndexedLexicalDocument>();
    const idOf = (i: number) => `f${i % 10}/doc/${i}`;
    // A narrow folder (a tenth: its documents are visited one by one), a wide tag (half: the
    // postings are scanned), both, and a folder that holds nothing.
    const filters: DocumentFilter[] = [
      { folder: 'f3/' },
      { tags: ['red'] },
      { folder: 'f3/', tags: ['red'] },
      { folder: 'f3/doc/' },
      { folder: 'nothing/' },
      // Readable folders (an access policy's): few, many (a mask), with a tag, none.
      { folders: ['f3/'] },
      { folders: ['f1/', 'f2/', 'f3/', 'f5/'] },
      { folders: ['f1/', 'f2/', 'f3/', 'f5/'], tags: ['red'] },
      { folders: ['f1/', 'f2/', 'f3/', 'f5/'], folder: 'f2/' },
      { folders: [] },
    ];
    for (let i = 0; i < 300; i++) {
      const d = document(idOf(i), next);
      index.set(d);
      held.set(d.documentId, d);
    }
    const check = () => {
      for (let q = 0; q < 40; q++) {
        const query = Array.from({ length: 1 + Math.floor(next() * 5) }, () => ({
          term: lexicalRecord(WORDS[Math.floor(next() * WORDS.length)], '', []).terms[0],
          weight: next() < 0.8 ? 1 : 0.3,
        }));
        const all = reference([...held.values()], query);
        const got = index.search(query, 10);
        expect(got.map((h) => [h.documentId, h.score])).toEqual(
          all.slice(0, 10).map((h) => [h.documentId, h.score]),
        );
        for (const filter of filters) {
          const admitted = admits(filter);
          const expected = all.filter((h) => admitted(h.documentId, held.get(h.documentId)!.tags));
          expect(index.search(query, 10, filter).map((h) => [h.documentId, h.score])).toEqual(
            expected.slice(0, 10).map((h) => [h.documentId, h.score]),
          );
        }
      }
      expect([...(index.admitted({ folder: 'f3/' }) ?? [])].sort()).toEqual(
        [...held.keys()].filter((id) => id.startsWith('f3/')).sort(),
      );
      expect(index.admitted({ tags: ['red'] })).toBeUndefined();
    };
    check();
    // Rewrites and deletes: statistics follow, lists are compacted, slots renumbered.
    for (let i = 0; i < 2500; i++) {
      const id = idOf(Math.floor(next() * 300));
      if (next() < 0.3) {
        index.remove(id);
        held.delete(id);
      } else {
        const d = document(id, next, i + 2);
        index.set(d);
        held.set(id, d);
      }
    }
    expect(index.documentCount).toBe(held.size);
    expect(index.postings).toBe([...held.values()].reduce((a, d) => a + d.terms.length, 0));
    check();
  });

  it('applies the filter while scoring: `limit` results come back however few are admitted', () => {
    const index = new LexicalIndex();
    const record = (text: string) => lexicalRecord('', text, [{ headings: [], content: text }]);
    for (let i = 0; i < 1000; i++) {
      index.set({ documentId: `hidden/${i}`, revision: 1, tags: [], ...record('needle needle') });
    }
    for (let i = 0; i < 12; i++) {
      index.set({ documentId: `open/${i}`, revision: 1, tags: [], ...record('needle hay') });
    }
    for (let i = 0; i < 500; i++) {
      index.set({ documentId: `wide/${i}`, revision: 1, tags: ['wide'], ...record('needle') });
    }
    const needle = [{ term: 'needl', weight: 1 }];
    // A narrow folder (its 12 documents visited one by one) and a wide tag (scanned).
    const hits = index.search(needle, 10, { folder: 'open/' });
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => h.documentId.startsWith('open/'))).toBe(true);
    expect(index.admitted({ folder: 'open/' })).toHaveLength(12);
    expect(index.admitted({ tags: ['wide'] })).toBeUndefined();
    const wide = index.search(needle, 50, { tags: ['wide'] });
    expect(wide).toHaveLength(50);
    expect(wide.every((h) => h.documentId.startsWith('wide/'))).toBe(true);
  });

  it("shows the passage holding most of the query's weight, the first when none holds any", () => {
    const index = new LexicalIndex();
    const passages = [
      { headings: ['Intro'], content: 'general words about nothing' },
      { headings: ['Leases'], content: 'a lease is renewed by the worker' },
      { headings: ['Backups'], content: 'nightly snapshot and restore of the snapshot' },
    ];
    const body = passages.map((p) => `## ${p.headings[0]}\n\n${p.content}`).join('\n\n');
    index.set({ documentId: 'd', revision: 1, tags: [], ...lexicalRecord('Doc', body, passages) });
    const term = (word: string) => ({ term: lexicalRecord('', word, []).terms[0], weight: 1 });
    expect(index.search([term('snapshot'), term('restore')], 1)[0].passage).toBe(2);
    expect(index.passageFor('d', [term('lease')])).toBe(1);
    expect(index.passageFor('d', [term('zeppelin')])).toBe(0);
    expect(index.passageFor('absent', [term('lease')])).toBe(0);
  });

  it('finds the terms containing a word, the most frequent first', () => {
    const index = new LexicalIndex();
    const add = (id: string, text: string) =>
      index.set({ documentId: id, revision: 1, tags: [], ...lexicalRecord('', text, []) });
    add('a', 'Datenbanksicherungen');
    add('b', 'Datenbankverbindung Datenbanksicherungen');
    expect(index.termsContaining('datenbank', 8)).toEqual([
      'datenbanksicherungen',
      'datenbankverbindung',
    ]);
    expect(index.frequency('datenbank')).toBe(0);
  });

  it('takes in what links say of a document where it stands, ranking as an index built with it', () => {
    const next = random(11);
    const plain = Array.from({ length: 40 }, (_, i) => document(`d${i}`, next));
    /** d7 as the links describe it: `labels` as its anchor field, the rest as it is. */
    const described = (labels: string[]): IndexedLexicalDocument => ({
      ...plain[7],
      ...withAnchorField(plain[7], anchorFieldOf(labels)),
    });
    const queries = [WORDS[0], WORDS[3], WORDS[20], WORDS[41], 'zorbul', 'quokkatron'].map(
      (term) => [{ term, weight: 1 }],
    );
    const slots = (index: LexicalIndex) => index.state().revisions.length;
    const agree = (index: LexicalIndex, documents: IndexedLexicalDocument[]) => {
      const built = new LexicalIndex();
      for (const d of documents) built.set(d);
      for (const query of queries) {
        expect(index.search(query, 10)).toEqual(built.search(query, 10));
      }
      expect(index.averages).toEqual(built.averages);
      expect(index.termCountsOf('d7')).toEqual(built.termCountsOf('d7'));
    };

    const index = new LexicalIndex();
    for (const d of plain) index.set(d);
    // Words it says itself, and one no document holds yet: rewritten and appended in place.
    const words = described([`${WORDS[3]} ${WORDS[20]}`, 'the zorbulator']);
    expect(index.set(words)).toBe(true);
    expect(slots(index)).toBe(40);
    agree(index, [...plain.slice(0, 7), words, ...plain.slice(8)]);
    expect(index.search([{ term: 'zorbul', weight: 1 }], 10)[0].documentId).toBe('d7');

    // A word only links say, that a later document holds: taken in as a new document.
    index.set({ ...document('d40', next), ...lexicalRecord('Quokkatron', 'quokkatron', []) });
    const later = described([`${WORDS[3]} ${WORDS[20]}`, 'the zorbulator', 'quokkatron']);
    expect(index.set(later)).toBe(false);
    expect(slots(index)).toBe(42);

    // A word no longer said, and a new revision: taken in as a new document too.
    expect(index.set(described([WORDS[3]]))).toBe(false);
    expect(index.set({ ...plain[7], revision: 2 })).toBe(false);
    expect(index.set({ ...plain[7], revision: 2 })).toBe(true);
  });
});
