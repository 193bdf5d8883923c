import { createHash } from 'node:crypto';
import { tokenize } from './feature-hashing';
import { LocalEmbedder } from './local.embedder';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i], 0);

describe('LocalEmbedder', () => {
  const embedder = new LocalEmbedder(768);

  it('is deterministic: the same text gives the same vector, in any instance', async () => {
    const text = 'The worker claims pending documents with SKIP LOCKED.';
    const [a] = await embedder.embed([text]);
    const [b] = await new LocalEmbedder(768).embed([text]);
    expect(Array.from(a)).toEqual(Array.from(b));
    // Pinned values: a change of hashing or weights changes every stored vector, and must
    // come with a new model name (stores re-embed everything when the model changes).
    expect(embedder.model).toBe('feature-hashing-v1-768');
    expect(createHash('sha256').update(Buffer.from(a.buffer)).digest('hex')).toBe(
      '72fd678c01e59d99eb045074a761e09c834d0d99e31bdf68397695d6a6aad253',
    );
    const nonZero = Array.from(a).filter((v) => v !== 0).length;
    expect(nonZero).toBeGreaterThan(20);
  });

  it('returns unit-length vectors of the configured dimension', async () => {
    const vectors = await new LocalEmbedder(256).embed(['short', 'a longer text '.repeat(50)]);
    for (const v of vectors) {
      expect(v).toHaveLength(256);
      expect(cosine(v, v)).toBeCloseTo(1, 5);
    }
  });

  it('scores related texts above unrelated ones', async () => {
    const [query, related, partly, unrelated] = await embedder.embed([
      'how does the vector sync worker retry failed embeddings',
      'The sync worker retries a failed embedding with exponential backoff before marking an error.',
      'Vectors are stored in PostgreSQL.',
      'Boil the pasta in salted water for nine minutes and serve with basil.',
    ]);
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, partly));
    expect(cosine(query, partly)).toBeGreaterThan(cosine(query, unrelated));
    expect(cosine(query, related)).toBeGreaterThan(0.2);
    expect(Math.abs(cosine(query, unrelated))).toBeLessThan(0.1);
  });

  it('matches word forms through character trigrams (lexical, not semantic)', async () => {
    const [embedding, embedder_, car, automobile] = await embedder.embed([
      'embedding',
      'embedder',
      'car',
      'automobile',
    ]);
    expect(cosine(embedding, embedder_)).toBeGreaterThan(0.3);
    // Synonyms share no letters: the local embedder does not know they mean the same.
    expect(cosine(car, automobile)).toBeLessThan(0.15);
  });

  it('gives an all-zero vector to text without words', async () => {
    const [v] = await embedder.embed(['  ... !!! ']);
    expect(Array.from(v).every((x) => x === 0)).toBe(true);
  });

  it('ignores stopwords unless nothing else is there', async () => {
    const [a, b] = await embedder.embed(['the worker', 'worker']);
    expect(cosine(a, b)).toBeCloseTo(1, 5);
    const [only] = await embedder.embed(['the of and']);
    expect(Array.from(only).some((x) => x !== 0)).toBe(true);
  });
});

describe('tokenize', () => {
  it('lower-cases words and numbers of any script, NFKC-normalised', () => {
    expect(tokenize('Hello, Wörld! ＡＢＣ 42 vector_sync-lag')).toEqual([
      'hello',
      'wörld',
      'abc',
      '42',
      'vector',
      'sync',
      'lag',
    ]);
  });
});
