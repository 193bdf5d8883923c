import type { DataSource } from 'typeorm';
import type { AppConfig } from '../src/config/app-config';
import type { EmbeddingsChoice } from '../src/config/embeddings-choice';
import { LexicalStore } from '../src/vectors/lexical/lexical.store';
import type { LsaModel, LsaTrainer } from '../src/vectors/semantic/lsa';
import { SemanticModelRepository } from '../src/vectors/semantic/semantic-model.repository';
import { SEMANTIC_SAMPLE } from '../src/vectors/semantic/semantic-training';
import type {
  QdrantLexicalIndex,
  RecordPages,
} from '../src/vectors/stores/qdrant/qdrant-lexical.index';
import { QdrantSemantic } from '../src/vectors/stores/qdrant/qdrant-semantic';
import { QdrantSemanticRepository } from '../src/vectors/stores/qdrant/qdrant-semantic.repository';
import { useTestDataSource } from './support/data-source';

/** A model learnt from a full sample whose terms are each in `df` of its documents. */
function aModel(id: string, df: Record<string, number>): LsaModel {
  const terms = Object.keys(df);
  return {
    id,
    dimensions: 64,
    documents: SEMANTIC_SAMPLE,
    terms,
    vectors: Float32Array.from({ length: terms.length * 64 }, (_, i) => Math.sin(i + id.length)),
    idf: Float32Array.from(terms, (term) => Math.log(1 + SEMANTIC_SAMPLE / df[term])),
  };
}

const LOGGING = { log: 2000, level: 1500, pino: 800, child: 300, transport: 200 };
const first = aModel('logging-1', LOGGING);
/** Learnt again from another sample of the same knowledge base: the same terms, other counts. */
const again = aModel('logging-2', { ...LOGGING, log: 2100, level: 1400, child: 320 });
/** Learnt again once invoices came in: terms the first model never met. */
const invoices = aModel('invoices', { ...LOGGING, invoice: 900, vat: 600, ledger: 400 });

/** A trainer that hands out these models in turn, whatever the sample. */
function trainerOf(...models: LsaModel[]): LsaTrainer & { left: LsaModel[] } {
  const left = [...models];
  return { left, trainLsa: async () => left.shift()! };
}

/**
 * Past a full sample, a model learnt again by the count rules replaces the one searched only
 * when the knowledge base speaks of something that one does not know (semantic-training.ts,
 * `stillCurrent`): otherwise it stays, nothing is computed or written again, and the rules
 * count from the new size. Both lexical stores, on PostgreSQL (the models) with the learning
 * and the writing of the documents' vectors watched.
 */
describe('a semantic model learnt again from a full sample', () => {
  const database = useTestDataSource();
  let dataSource: DataSource;
  beforeAll(() => (dataSource = database()));

  it('in Qdrant: writes no point again for a model no better, and does for one that knows more', async () => {
    const trainer = trainerOf(first, again, invoices);
    const records = {
      trainingSample: async () => [],
      totals: async () => ({ documents: 0, changedAt: 0 }),
      eachRecordPage: async () => 0,
    } as unknown as RecordPages;
    const rewrites: number[] = [];
    const index = {
      rewrite: async () => rewrites.push(rewrites.length + 1),
    } as unknown as QdrantLexicalIndex;
    const semantic = new QdrantSemantic(dataSource, 'kb_relearn', records, index, trainer);
    const slots = new QdrantSemanticRepository(dataSource, 'kb_relearn');
    const learnAt = (documents: number) => semantic['learnAndBuild'](documents);

    await learnAt(6000);
    expect(rewrites).toHaveLength(1);
    expect(await slots.slotsNow()).toEqual([
      { slot: 'a', state: 'active', modelId: first.id, learntAt: 6000 },
    ]);

    await learnAt(12_000);
    expect(trainer.left).toEqual([invoices]);
    expect(rewrites).toHaveLength(1);
    expect(await slots.slotsNow()).toEqual([
      { slot: 'a', state: 'active', modelId: first.id, learntAt: 12_000 },
    ]);
    expect((await semantic.describe())?.documents).toBe(12_000);

    await learnAt(24_000);
    expect(rewrites).toHaveLength(2);
    expect(await slots.slotsNow()).toEqual([
      { slot: 'b', state: 'active', modelId: invoices.id, learntAt: 24_000 },
    ]);
    await semantic.close();
  });

  it('in the local index: computes no vector again for a model no better, and keeps its new count', async () => {
    const trainer = trainerOf(first, again, invoices);
    const store = new LexicalStore(
      dataSource,
      { clusterRole: 'single' } as AppConfig,
      { lsa: () => true } as unknown as EmbeddingsChoice,
      trainer,
    );
    const kept = new SemanticModelRepository(dataSource);
    await store['replica'].current();
    const searched = () => store['replica'].semanticModel?.id;

    await store['learn'](6000);
    expect(searched()).toBe(first.id);

    await store['learn'](12_000);
    expect(trainer.left).toEqual([invoices]);
    expect(searched()).toBe(first.id);
    expect(store.semanticModel?.documents).toBe(12_000);
    const keptNow = await kept.load();
    expect([keptNow?.model.id, keptNow?.learntAt]).toEqual([first.id, 12_000]);

    await store['learn'](24_000);
    expect(searched()).toBe(invoices.id);
    expect((await kept.load())?.model.id).toBe(invoices.id);
    await store.onModuleDestroy();
  });
});
