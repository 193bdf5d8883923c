import { fuse } from './fusion';

const hit = (documentId: string) => ({
  documentId,
  title: documentId,
  score: 0,
  heading: '',
  content: `passage of ${documentId}`,
});

describe('fuse (weighted reciprocal rank fusion)', () => {
  const lexical = [hit('a'), hit('b'), hit('c')];
  const vector = [hit('c'), hit('d'), hit('a')];

  it('adds 1 / (k + rank) per side, so a document both sides found comes first', () => {
    const fused = fuse(lexical, vector, 60);
    expect(fused.map((h) => h.documentId)).toEqual(['a', 'c', 'b', 'd']);
    expect(fused[0].score).toBeCloseTo(1 / 61 + 1 / 63, 12);
  });

  it('weighs the vector side by vectorWeight: a lighter one reorders towards the lexical side', () => {
    const onlyC = [hit('c'), hit('d')];
    // k 1, equal weights: c = 1/4 + 1/2 beats a = 1/2.
    expect(fuse(lexical, onlyC, 1).map((h) => h.documentId)).toEqual(['c', 'a', 'b', 'd']);
    // Vector weight 0.3: c = 1/4 + 0.3/2 = 0.4 falls behind a = 0.5, ahead of b = 1/3.
    const light = fuse(lexical, onlyC, 1, 0.3);
    expect(light.map((h) => h.documentId)).toEqual(['a', 'c', 'b', 'd']);
    expect(light[1].score).toBeCloseTo(1 / 4 + 0.3 / 2, 12);
    // Weight 0: the lexical order, then what only the vector side found.
    expect(fuse(lexical, vector, 60, 0).map((h) => h.documentId)).toEqual(['a', 'b', 'c', 'd']);
  });

  it("keeps the lexical side's passage for a document both sides found", () => {
    const fromVector = { ...hit('a'), content: 'the vector side passage' };
    const [first] = fuse([hit('a')], [fromVector], 60);
    expect(first.content).toBe('passage of a');
  });
});
