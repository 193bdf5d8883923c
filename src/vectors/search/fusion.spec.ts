import fc from 'fast-check';
import {
  commitment,
  commitmentDepth,
  FOLDER_COMMITMENT_DEPTH,
  fuse,
  vectorWeightFor,
} from './fusion';

const hit = (documentId: string, score: number) => ({
  documentId,
  title: documentId,
  score,
  heading: '',
  content: `passage of ${documentId}`,
});

describe('fuse (normalised-score combination)', () => {
  const lexical = [hit('a', 12), hit('b', 7), hit('c', 2)];
  const vector = [hit('c', 0.9), hit('d', 0.5), hit('a', 0.4)];

  it('scales each side to [0, 1] and adds them weighted', () => {
    const fused = fuse(lexical, vector, 0.5);
    // a: 0.5·1 + 0.5·0 ; b: 0.5·0.5 ; c: 0.5·0 + 0.5·1 ; d: 0.5·0.2
    expect(fused.map((h) => [h.documentId, h.score])).toEqual([
      ['a', 0.5],
      ['c', 0.5],
      ['b', 0.25],
      ['d', expect.closeTo(0.1, 12)],
    ]);
  });

  it('keeps a side far ahead ahead: a confident vector answer passes weak lexical ones', () => {
    const weak = [hit('x', 10), hit('y', 9.9), hit('z', 1)];
    const sure = [hit('v', 0.8), hit('x', 0.1)];
    const fused = fuse(weak, sure, 0.4);
    // x 0.6 + 0, y 0.6·0.989, v 0.4: the lexical pair first, v before z (0).
    expect(fused.map((h) => h.documentId)).toEqual(['x', 'y', 'v', 'z']);
    // With weight 0.7 the vector side's sure answer comes first.
    expect(fuse(weak, sure, 0.7)[0].documentId).toBe('v');
  });

  it('weight 0 is the lexical order, then what only the vector side found', () => {
    expect(fuse(lexical, vector, 0).map((h) => h.documentId)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a side of one document, or of equal scores, counts fully; an empty side adds nothing', () => {
    expect(fuse([hit('a', 3)], [], 0.3)).toEqual([{ ...hit('a', 3), score: 0.7 }]);
    expect(fuse([], [hit('v', 0.2), hit('w', 0.2)], 0.3).map((h) => h.score)).toEqual([0.3, 0.3]);
  });

  it("keeps the lexical side's passage for a document both sides found", () => {
    const fromVector = { ...hit('a', 1), content: 'the vector side passage' };
    const [first] = fuse([hit('a', 1)], [fromVector], 0.5);
    expect(first.content).toBe('passage of a');
  });
});

describe('fuse with a floor', () => {
  it("leaves out what only the vector side found when it scores under the floor's share of the best", () => {
    const lexical = [hit('a', 9), hit('b', 1)];
    const vector = [hit('a', 0.9), hit('n1', 0.85), hit('n2', 0.3)];
    // a 1; b 0 (found by its words: kept, with no lexical floor given); n1 0.5·(0.55/0.6); n2 0 (a mere neighbour: out).
    expect(fuse(lexical, vector, 0.5, { floor: 0.25 }).map((h) => h.documentId)).toEqual([
      'a',
      'n1',
      'b',
    ]);
    expect(fuse(lexical, vector, 0.5).map((h) => h.documentId)).toEqual(['a', 'n1', 'b', 'n2']);
  });

  it('leaves out what only the lexical side found when it scores under its floor, never what both found', () => {
    const lexical = [hit('a', 9), hit('w', 5), hit('common-word', 1), hit('both-weak', 1)];
    const vector = [hit('a', 0.9), hit('both-weak', 0.5), hit('n', 0.1)];
    // a 1; w 0.5·0.5 = 0.25; common-word 0 (lexical only: out); both-weak 0 + 0.5·0.5 (kept).
    const ids = fuse(lexical, vector, 0.5, { floor: 0.25, lexicalFloor: 0.1 }).map(
      (h) => h.documentId,
    );
    expect(ids).toEqual(['a', 'w', 'both-weak']);
    expect(fuse(lexical, vector, 0.5, { floor: 0.25 }).map((h) => h.documentId)).toContain(
      'common-word',
    );
  });
});

describe('fuse with the depth asked (a side that ran out of candidates)', () => {
  it("keeps a short side's last match above nothing: its floor is 0, not its last score", () => {
    const lexical = [hit('a', 6), hit('b', 4), hit('c', 3)];
    // Three matches of 20 asked: c is a match worth half of a, not the worst document.
    expect(fuse(lexical, [], 0, { depth: 20 }).map((h) => h.score)).toEqual([1, 4 / 6, 0.5]);
    // A side that gave all it was asked for is scaled over its own range, as before.
    expect(fuse(lexical, [], 0, { depth: 3 }).map((h) => h.score)).toEqual([1, 1 / 3, 0]);
  });

  it('lets a document both sides found in a small folder pass one only a weak side found', () => {
    // In a folder of four documents the lexical side matches two and the vector side ranks all four.
    const lexical = [hit('readme', 8), hit('answer', 7)];
    const vector = [hit('answer', 0.8), hit('other', 0.7), hit('readme', 0.5), hit('last', 0.4)];
    expect(fuse(lexical, vector, 0.5, { depth: 20 })[0].documentId).toBe('answer');
    // Scaled over its two matches alone, `answer` counted as no lexical match at all.
    expect(fuse(lexical, vector, 0.5)[0].documentId).toBe('readme');
  });

  it("scales an embedding model's vector side over the folder it ranked, not from a cosine of 0", () => {
    // A folder of four: the model's cosines differ little (none of them is near 0), the lexical
    // side matches common words in each.
    const lexical = [hit('intro', 8), hit('api', 6), hit('answer', 4), hit('notes', 3)];
    const vector = [hit('answer', 0.72), hit('notes', 0.66), hit('api', 0.63), hit('intro', 0.6)];
    const fromZero = fuse(lexical, vector, 0.6, { depth: 20 });
    const overRanked = fuse(lexical, vector, 0.6, { depth: 20, vectorFromZero: false });
    // From 0, the cosines span 0.83–1 of the vector side's range and the lexical order wins.
    expect(fromZero[0].documentId).toBe('intro');
    // Over the folder's range the model's clear first answer comes first.
    expect(overRanked[0].documentId).toBe('answer');
    expect(overRanked.find((h) => h.documentId === 'intro')?.score).toBeCloseTo(0.4, 12);
    // The lexical side still ran out: its floor stays 0 (`notes` keeps 0.4 · 3/8 of its share).
    expect(overRanked.find((h) => h.documentId === 'notes')?.score).toBeCloseTo(
      0.4 * (3 / 8) + 0.6 * 0.5,
      12,
    );
  });
});

describe('the weight of each query (vectorWeightFor)', () => {
  const flat = [hit('a', 5), hit('b', 4.9), hit('c', 4.8), hit('d', 4.8)];
  const sharp = [hit('x', 0.9), hit('y', 0.2), hit('z', 0.1), hit('w', 0.1)];

  it('keeps the prior when both sides are as sure, and a prior of 0 or 1 as it is', () => {
    expect(vectorWeightFor(0.3, flat, flat, 20)).toBeCloseTo(0.3, 12);
    expect(vectorWeightFor(0, flat, sharp, 20)).toBe(0);
    expect(vectorWeightFor(1, sharp, flat, 20)).toBe(1);
  });

  it('leans towards the side whose first answers stand out from the rest', () => {
    expect(vectorWeightFor(0.3, flat, sharp, 20)).toBeGreaterThan(0.3);
    expect(vectorWeightFor(0.6, sharp, flat, 20)).toBeLessThan(0.6);
  });

  it('moves by three times the difference of the two commitments, in log-odds', () => {
    const odds = (w: number) => Math.log(w / (1 - w));
    const lead = commitment(sharp, 20) - commitment(flat, 20);
    expect(odds(vectorWeightFor(0.3, flat, sharp, 20))).toBeCloseTo(odds(0.3) + 3 * lead, 12);
    expect(odds(vectorWeightFor(0.3, sharp, flat, 20))).toBeCloseTo(odds(0.3) - 3 * lead, 12);
  });

  it("moves towards the vector side when the lexical side's first document covers little of the query", () => {
    // As sure as each other: only the coverage moves the prior, by 1.5 · (0.5 − coverage) in
    // log-odds.
    expect(vectorWeightFor(0.6, flat, flat, 20, 0.5)).toBeCloseTo(0.6, 12);
    const odds = (w: number) => Math.log(w / (1 - w));
    expect(odds(vectorWeightFor(0.6, flat, flat, 20, 0))).toBeCloseTo(odds(0.6) + 0.75, 12);
    expect(odds(vectorWeightFor(0.6, flat, flat, 20, 1))).toBeCloseTo(odds(0.6) - 0.75, 12);
    // A prior chosen outright stays.
    expect(vectorWeightFor(0, flat, flat, 20, 0)).toBe(0);
  });

  it("reads a folder query's commitments over the first ten candidates, a page", () => {
    expect(commitmentDepth(20, undefined)).toBe(20);
    expect(commitmentDepth(20, 'ops/')).toBe(FOLDER_COMMITMENT_DEPTH);
    expect(FOLDER_COMMITMENT_DEPTH).toBe(10);
    expect(commitmentDepth(5, 'ops/')).toBe(5);
    // A folder's lexical list: ten even matches, then documents sharing only a common word.
    const even = Array.from({ length: 10 }, (_, i) => hit(`even${i}`, 8 - i * 0.1));
    const tail = Array.from({ length: 10 }, (_, i) => hit(`tail${i}`, 1 - i * 0.05));
    const vector = Array.from({ length: 20 }, (_, i) => hit(`v${i}`, 0.8 - i * 0.01));
    const lexical = [...even, ...tail];
    const anywhere = vectorWeightFor(0.6, lexical, vector, commitmentDepth(20, undefined));
    const inFolder = vectorWeightFor(0.6, lexical, vector, commitmentDepth(20, 'ops/'));
    // Read to its tail, the lexical side looks sure of its first ten; over them, it is not.
    expect(anywhere).toBeLessThan(0.5);
    expect(inFolder).toBeGreaterThan(anywhere);
    expect(inFolder).toBeCloseTo(vectorWeightFor(0.6, even, vector.slice(0, 10), 10), 12);
  });

  it("lets a sure vector answer pass a lexical first that holds only the query's common words", () => {
    // The lexical side's first holds the common words, the vector side's first is the answer;
    // at the prior's weight the lexical first stays first, with the coverage moved it does not.
    const lexical = [hit('common', 10), hit('answer', 7), hit('other', 6)];
    const vector = [hit('answer', 0.9), hit('common', 0.7), hit('other', 0.69)];
    const order = (w: number) => fuse(lexical, vector, w, { depth: 3 }).map((h) => h.documentId);
    expect(order(vectorWeightFor(0.4, lexical, vector, 3))[0]).toBe('common');
    expect(order(vectorWeightFor(0.4, lexical, vector, 3, 0.1))[0]).toBe('answer');
    expect(order(vectorWeightFor(0.4, lexical, vector, 3, 0.9))[0]).toBe('common');
  });

  it("reads the scores' shape, not their scale: BM25 and cosine compare", () => {
    const scaled = sharp.map((h) => ({ ...h, score: h.score * 37 }));
    expect(commitment(scaled, 20)).toBeCloseTo(commitment(sharp, 20), 12);
    expect(commitment([], 20)).toBe(0);
    expect(commitment([hit('a', 2), hit('b', 2)], 20)).toBe(0);
  });
});

describe('fusion rule properties', () => {
  // A side's candidates: distinct documents of a small pool, strictly decreasing scores.
  const side = (scale: number) =>
    fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 25 }).chain((ids) =>
      fc
        .uniqueArray(fc.double({ min: 0.001, max: 1, noNaN: true }), {
          minLength: ids.length,
          maxLength: ids.length,
        })
        .map((scores) => {
          const sorted = [...scores].sort((a, b) => b - a);
          return ids.map((id, i) => hit(`d${id}`, sorted[i] * scale));
        }),
    );
  const prior = fc.double({ min: 0.01, max: 0.99, noNaN: true });
  const floors = { floor: 0.25, lexicalFloor: 0.1, depth: 20 };

  it("keeps the vector side's order when the lexical side matches none of the query's terms", () => {
    fc.assert(
      fc.property(side(1), prior, (vector, p) => {
        const fused = fuse([], vector, vectorWeightFor(p, [], vector, 20), floors);
        const order = vector.map((h) => h.documentId);
        expect(fused.map((h) => h.documentId)).toEqual(order.slice(0, fused.length));
        expect(fused.length).toBeGreaterThan(0);
      }),
    );
  });

  it("keeps the lexical side's order when the vector side has nothing", () => {
    fc.assert(
      fc.property(side(20), prior, (lexical, p) => {
        const fused = fuse(lexical, [], vectorWeightFor(p, lexical, [], 20), floors);
        const order = lexical.map((h) => h.documentId);
        expect(fused.map((h) => h.documentId)).toEqual(order.slice(0, fused.length));
      }),
    );
  });

  it('keeps on top the first documents both sides agree on, whatever the weight', () => {
    fc.assert(
      fc.property(side(20), side(1), prior, fc.integer({ min: 1, max: 5 }), (lex, vec, p, k) => {
        // The same k documents first on both sides (in any order), the rest as drawn.
        const common = lex.slice(0, k).map((h) => h.documentId);
        const rest = vec.filter((h) => !common.includes(h.documentId));
        const vector = [
          ...[...common].reverse().map((id, i) => hit(id, 2 + (common.length - i))),
          ...rest,
        ];
        const fused = fuse(lex, vector, vectorWeightFor(p, lex, vector, 20), floors);
        expect(new Set(fused.slice(0, common.length).map((h) => h.documentId))).toEqual(
          new Set(common),
        );
      }),
    );
  });

  it('gives every weight strictly between 0 and 1 for a prior between them', () => {
    fc.assert(
      fc.property(side(20), side(1), prior, (lex, vec, p) => {
        const w = vectorWeightFor(p, lex, vec, 20);
        expect(w).toBeGreaterThan(0);
        expect(w).toBeLessThan(1);
      }),
    );
  });
});
