import { idf } from '../../lexical/bm25';
import { IndexedLexicalDocument, LexicalIndex } from '../../lexical/lexical-index';
import { lexicalRecord } from '../../lexical/lexical-record';
import { lexicalVector, queryVector } from './lexical-vectors';
import { termId } from './term-ids';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const WORDS = Array.from({ length: 80 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`);

function aDocument(id: string, next: () => number): IndexedLexicalDocument {
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(WORDS.length * next() ** 2)]).join(' ');
  const passages = Array.from({ length: 1 + Math.floor(next() * 5) }, (_, i) => ({
    headings: [`Part ${i} ${words(2)}`],
    content: words(5 + Math.floor(next() * 60)),
  }));
  const body = passages.map((p) => `## ${p.headings[0]}\n\n${p.content}`).join('\n\n');
  return { documentId: id, revision: 1, tags: [], ...lexicalRecord(words(3), body, passages) };
}

describe('lexicalVector', () => {
  it('scores, with the idf Qdrant applies, exactly what the in-memory index scores', () => {
    const next = random(7);
    const documents = Array.from({ length: 120 }, (_, i) => aDocument(`d${i}`, next));
    const index = new LexicalIndex();
    for (const document of documents) index.set(document);
    const averages = index.averages;
    const vectors = new Map(documents.map((d) => [d.documentId, lexicalVector(d, averages)]));
    // Qdrant's side: for each query term, idf over the points holding its id, times the
    // query's value, times the document's value.
    const holding = (id: number) =>
      [...vectors.values()].filter((vector) => vector.indices.includes(id)).length;
    for (let q = 0; q < 25; q++) {
      const terms = Array.from({ length: 1 + Math.floor(next() * 5) }, (_, i) => ({
        term: WORDS[Math.floor(next() * WORDS.length)],
        weight: i === 0 ? 1 : next() < 0.5 ? 1 : 0.3,
      }));
      const unique = [...new Map(terms.map((t) => [t.term, t])).values()];
      const expected = index.search(unique, 200);
      const query = queryVector(unique);
      const scored = [...vectors.entries()]
        .map(([documentId, vector]) => {
          let score = 0;
          query.indices.forEach((id, k) => {
            const at = vector.indices.indexOf(id);
            if (at >= 0)
              score += idf(documents.length, holding(id)) * query.values[k] * vector.values[at];
          });
          return { documentId, score };
        })
        .filter((hit) => hit.score > 0);
      expect(scored).toHaveLength(expected.length);
      const byId = new Map(scored.map((hit) => [hit.documentId, hit.score]));
      for (const hit of expected) expect(byId.get(hit.documentId)).toBeCloseTo(hit.score, 6);
    }
  });

  it('gives each term of the document one index, in ascending order', () => {
    const document = aDocument('one', random(3));
    const vector = lexicalVector(document, {
      title: 3,
      headings: 4,
      body: 50,
      anchor: 1,
      passage: 20,
    });
    expect(vector.indices).toEqual([...vector.indices].sort((a, b) => a - b));
    expect(new Set(vector.indices).size).toBe(vector.indices.length);
    expect(vector.indices).toContain(termId(document.terms[0]));
    expect(vector.values.every((v) => v > 0 && Number.isFinite(v))).toBe(true);
  });

  it('keeps a query term once, at its highest weight', () => {
    const query = queryVector([
      { term: 'alpha', weight: 0.3 },
      { term: 'alpha', weight: 1 },
      { term: 'beta', weight: 0.3 },
    ]);
    expect(query.indices).toHaveLength(2);
    expect(query.values[query.indices.indexOf(termId('alpha'))]).toBe(1);
    expect(query.values[query.indices.indexOf(termId('beta'))]).toBe(0.3);
  });
});
