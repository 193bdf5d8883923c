import { fuse } from './fusion';

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
