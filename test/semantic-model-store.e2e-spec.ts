import type { DataSource } from 'typeorm';
import type { LsaModel } from '../src/vectors/semantic/lsa';
import {
  modelOfParts,
  SemanticModelRepository,
  VECTOR_PART_BYTES,
} from '../src/vectors/semantic/semantic-model.repository';
import { QdrantSemanticRepository } from '../src/vectors/stores/qdrant/qdrant-semantic.repository';
import { useTestDataSource } from './support/data-source';

/**
 * A model of `terms` terms in 64 dimensions whose every float is distinct (its vectors' bytes
 * read back out of order, or a part twice, would not compare equal).
 */
function aModel(id: string, terms: number): LsaModel {
  const dimensions = 64;
  return {
    id,
    dimensions,
    documents: 5000,
    terms: Array.from({ length: terms }, (_, i) => `term${i.toString(36)}`),
    vectors: Float32Array.from({ length: terms * dimensions }, (_, i) => Math.sin(i) * 1e-3 + i),
    idf: Float32Array.from({ length: terms }, (_, i) => 1 + i / terms),
  };
}

/** The same model, its vectors compared byte for byte (jest's deep equality is slow on them). */
function expectSameModel(actual: LsaModel | undefined, expected: LsaModel): void {
  expect({ ...actual, vectors: undefined }).toEqual({ ...expected, vectors: undefined });
  expect(Buffer.from(actual!.vectors.buffer).equals(Buffer.from(expected.vectors.buffer))).toBe(
    true,
  );
}

/**
 * The latent-semantic model kept in PostgreSQL is read back whole, its vectors in parts of
 * rows (semantic-model.repository.ts): the same model to the bit, whatever its size against
 * the parts' and the statements', from both of the tables that keep one.
 */
describe('semantic models kept in PostgreSQL', () => {
  const database = useTestDataSource();
  let dataSource: DataSource;
  beforeAll(() => (dataSource = database()));

  // 1 term: less than a part; 64: exactly one part; 1 000: several statements and a partial
  // part; 20 000: the largest model learnt (5 MB of vectors).
  it.each([1, 64, 1000, 20_000])('reads back a model of %i terms as saved', async (terms) => {
    // The cases mean what they say of the parts only at this size of a part.
    expect(VECTOR_PART_BYTES).toBe(64 * 64 * 4);
    const model = aModel(`model-${terms}`, terms);
    const kept = new SemanticModelRepository(dataSource);
    await kept.save(model, 5000);

    const loaded = await kept.load();

    expect(loaded?.learntAt).toBe(5000);
    expectSameModel(loaded?.model, model);
  });

  it("reads a Qdrant collection's model by its slot and id, and nothing of another id", async () => {
    const model = aModel('qdrant-model', 3000);
    const repository = new QdrantSemanticRepository(dataSource, 'kb_test');
    await repository.build('b', model, 4000);

    expectSameModel(await repository.model('b', model.id), model);
    expect(await repository.model('b', 'another-model')).toBeUndefined();
    expect(await repository.model('a', model.id)).toBeUndefined();
  });

  it('moves the count of a model found still current, and of no other model', async () => {
    const kept = new SemanticModelRepository(dataSource);
    await kept.save(aModel('kept-now', 10), 6000);
    await kept.confirm('replaced-meanwhile', 9000);
    expect((await kept.load())?.learntAt).toBe(6000);
    await kept.confirm('kept-now', 12_000);
    expect((await kept.load())?.learntAt).toBe(12_000);

    const slots = new QdrantSemanticRepository(dataSource, 'kb_confirm');
    await slots.build('a', aModel('building-now', 10), 6000);
    // Not searched yet: a model being written is not confirmed.
    await slots.confirm('a', 'building-now', 9000);
    expect(await slots.slotsNow()).toEqual([
      { slot: 'a', state: 'building', modelId: 'building-now', learntAt: 6000 },
    ]);
    await slots.activate('a', 'building-now');
    await slots.confirm('a', 'another-model', 9000);
    await slots.confirm('a', 'building-now', 12_000);
    expect(await slots.slotsNow()).toEqual([
      { slot: 'a', state: 'active', modelId: 'building-now', learntAt: 12_000 },
    ]);
  });

  it('reads a row whose vectors disagree with its terms as no model', async () => {
    const model = aModel('torn', 100);
    const kept = new SemanticModelRepository(dataSource);
    await kept.save(model, 100);
    await dataSource.query(
      `UPDATE kb_semantic_model SET vectors = substring(vectors FROM 1 FOR length(vectors) - 4)`,
    );

    expect(await kept.load()).toBeUndefined();
  });

  it('gives no model, and does not wait, when the parts stop short of the vectors', async () => {
    const head = {
      dimensions: 64,
      documents: 1,
      terms: 'a',
      idf: Buffer.alloc(4),
      vector_bytes: 256,
    };
    const half = Buffer.alloc(128, 1).toString('hex');
    const answers: Array<Array<{ hex: string }>> = [[{ hex: half }], [{ hex: '' }]];

    expect(await modelOfParts('m', head, async () => [])).toBeUndefined();
    expect(await modelOfParts('m', head, async () => answers.shift() ?? [])).toBeUndefined();
    expect(answers).toEqual([]);
  });
});
