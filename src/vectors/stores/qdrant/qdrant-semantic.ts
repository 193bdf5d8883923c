import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { countsOf } from '../../lexical/lexical-rows';
import type { LexicalWrite } from '../../lexical/lexical-side';
import { LsaEmbedding, type LsaTrainer } from '../../semantic/lsa';
import {
  learnModel,
  modelDue,
  SEMANTIC_CHECK_MS,
  SEMANTIC_MIN_DOCUMENTS,
  stillCurrent,
  vocabularyCovered,
} from '../../semantic/semantic-training';
import type { SemanticSlot } from './qdrant-collection';
import type { QdrantLexicalIndex, RecordPages, SemanticVectors } from './qdrant-lexical.index';
import { QdrantSemanticRepository, type SlotRow } from './qdrant-semantic.repository';

/** What the status endpoint shows of the model (vectors-admin.schemas.ts). */
export interface SemanticReport {
  readonly documents: number | null;
  readonly sample: number | null;
  readonly terms: number | null;
  readonly dimensions: number | null;
  readonly [detail: string]: unknown;
}

/** How long a search may use the slots it read before reading them again. */
const SLOTS_FRESH_MS = 2000;

/**
 * The latent-semantic model with the lexical side in Qdrant (LOCAL_SEMANTIC=lsa and
 * LEXICAL_STORE=qdrant): each document's vector under the model is a named vector of its
 * point, written with its lexical vector, and a search embeds the query under the same model
 * and asks Qdrant for the nearest documents in the same request as the lexical side.
 *
 * The model is learnt as the knowledge base grows (semantic-training.ts), by one server at a
 * time (a session lock in PostgreSQL), from the records in PostgreSQL. A new model gets the
 * slot not searched (qdrant-collection.ts: `semantic_a`, `semantic_b`), every document's
 * point is written again with both models' vectors (writers meanwhile write both too), and
 * only then is it made the searched one: a search never meets a mix of two models' vectors.
 * A learner that stops half-way leaves its model `building`; the next one starts its
 * rebuild again. No server holds any document's vector.
 */
export class QdrantSemantic implements SemanticVectors {
  private readonly logger = new Logger('QdrantSemantic');
  private readonly repository: QdrantSemanticRepository;
  /** The embedding of each model met, by id (the slots' models only). */
  private readonly embeddings = new Map<string, Promise<LsaEmbedding | undefined>>();
  private slots: { rows: SlotRow[]; at: number } | undefined;
  private reading: Promise<SlotRow[]> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private learning: Promise<void> | undefined;
  private lastAttempt = 0;
  private readonly startedAt = Date.now();
  private failure: string | undefined;
  private closed = false;
  /** The rebuild in progress in this process, for the status endpoint. */
  private building: { modelId: string; slot: SemanticSlot; written: number } | undefined;

  constructor(
    dataSource: DataSource,
    collection: string,
    private readonly records: RecordPages,
    private readonly index: QdrantLexicalIndex,
    private readonly trainer?: LsaTrainer,
  ) {
    this.repository = new QdrantSemanticRepository(dataSource, collection);
  }

  /** Learns models when due, from now on (a process that runs the pipeline). */
  start(): void {
    if (this.timer || this.trainer === undefined) return;
    this.timer = setInterval(() => this.learnWhenDue(), SEMANTIC_CHECK_MS);
    this.timer.unref();
    this.learnWhenDue();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.learning?.catch(() => undefined);
  }

  /** What the status endpoint shows: the model searched and a rebuild under way, if any. */
  async describe(): Promise<SemanticReport | null> {
    const rows = await this.repository.slotsNow();
    const active = rows.find((row) => row.state === 'active');
    const building = rows.find((row) => row.state === 'building');
    const model = active && (await this.embedding(active))?.model;
    if (!active && !building) return null;
    return {
      documents: active?.learntAt ?? null,
      sample: model?.documents ?? null,
      terms: model?.terms.length ?? null,
      dimensions: model?.dimensions ?? null,
      slot: active?.slot ?? null,
      building: building
        ? {
            slot: building.slot,
            documents: building.learntAt,
            written_here:
              this.building?.modelId === building.modelId ? this.building.written : null,
          }
        : null,
      last_failure: this.failure ?? null,
    };
  }

  async vectorsFor(
    manager: EntityManager,
    documents: readonly LexicalWrite[],
  ): Promise<Array<Partial<Record<SemanticSlot, Float32Array>>>> {
    const rows = await this.repository.slotsForWriting(manager);
    if (rows.length === 0) return [];
    const models = await Promise.all(
      rows.map(async (row) => [row.slot, await this.embedding(row)] as const),
    );
    return documents.map((document) => {
      const counts = countsOf(document.record);
      const vectors: Partial<Record<SemanticSlot, Float32Array>> = {};
      for (const [slot, embedding] of models) {
        if (embedding) vectors[slot] = embedding.embed(counts);
      }
      return vectors;
    });
  }

  /**
   * The query's vector under the model searched, and its slot; `undefined` while none is (the
   * knowledge base is small, or its first model is being learnt).
   */
  async queryVector(
    terms: ReadonlyMap<string, number>,
  ): Promise<{ slot: SemanticSlot; vector: Float32Array } | undefined> {
    const rows = await this.currentSlots();
    const active = rows.find((row) => row.state === 'active');
    const embedding = active && (await this.embedding(active));
    if (!active || !embedding) return undefined;
    return { slot: active.slot, vector: embedding.embed(terms) };
  }

  /**
   * Whether a model is searched: from then on the passages' dense vectors are never searched
   * (a model is replaced only by another), so the pipeline stops writing them.
   */
  async modelSearched(): Promise<boolean> {
    return (await this.currentSlots()).some((row) => row.state === 'active');
  }

  private async currentSlots(): Promise<SlotRow[]> {
    if (this.slots && Date.now() - this.slots.at < SLOTS_FRESH_MS) return this.slots.rows;
    this.reading ??= this.repository
      .slotsNow()
      .then((rows) => {
        this.slots = { rows, at: Date.now() };
        this.forgetOtherModels(rows);
        return rows;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  private embedding(row: SlotRow): Promise<LsaEmbedding | undefined> {
    let found = this.embeddings.get(row.modelId);
    if (found === undefined) {
      found = this.repository
        .model(row.slot, row.modelId)
        .then((model) => model && new LsaEmbedding(model));
      found.catch(() => this.embeddings.delete(row.modelId));
      this.embeddings.set(row.modelId, found);
    }
    return found;
  }

  private forgetOtherModels(rows: readonly SlotRow[]): void {
    const kept = new Set(rows.map((row) => row.modelId));
    for (const id of this.embeddings.keys()) if (!kept.has(id)) this.embeddings.delete(id);
  }

  private learnWhenDue(): void {
    if (this.learning || this.closed) return;
    this.learning = this.learnIfDue()
      .catch((error: Error) => {
        this.failure = error.message;
        this.logger.warn(`semantic model not learnt: ${error.message}`);
      })
      .finally(() => (this.learning = undefined));
  }

  private async learnIfDue(): Promise<void> {
    const [totals, rows] = await Promise.all([this.records.totals(), this.repository.slotsNow()]);
    const active = rows.find((row) => row.state === 'active');
    const building = rows.find((row) => row.state === 'building');
    const due =
      (building !== undefined && Date.now() - this.lastAttempt >= 30_000) ||
      modelDue({
        documents: totals.documents,
        learntAt: active?.learntAt,
        modelId: active?.modelId,
        lastChange: totals.changedAt,
        lastAttempt: this.lastAttempt,
        startedAt: this.startedAt,
        now: Date.now(),
      });
    if (!due || totals.documents < SEMANTIC_MIN_DOCUMENTS) return;
    this.lastAttempt = Date.now();
    const release = await this.repository.tryLearning();
    // Another server learns (or builds) now.
    if (release === undefined) return;
    try {
      await this.learnAndBuild(totals.documents);
      this.failure = undefined;
    } finally {
      await release();
    }
  }

  /**
   * Under the learner's lock: resumes a model left building, or learns a new one into the
   * slot not searched; writes every document's point again; makes the model the searched one.
   */
  private async learnAndBuild(documents: number): Promise<void> {
    const rows = await this.repository.slotsNow();
    const active = rows.find((row) => row.state === 'active');
    let building = rows.find((row) => row.state === 'building');
    const started = Date.now();
    if (building === undefined) {
      const model = await learnModel(this.records, this.trainer!);
      if (this.closed) return;
      const searched = active && (await this.embedding(active))?.model;
      if (active && searched && stillCurrent(searched, model)) {
        // Every document's point would be written again for a model no better.
        await this.repository.confirm(active.slot, active.modelId, documents);
        this.slots = undefined;
        this.logger.log(
          `semantic model learnt again from ${model.documents} documents in ${Date.now() - started} ms: the one searched (counted at ${active.learntAt} documents before) knows ${(100 * vocabularyCovered(searched, model)).toFixed(2)} % of its vocabulary and stays; nothing written again`,
        );
        return;
      }
      const slot: SemanticSlot = active?.slot === 'a' ? 'b' : 'a';
      await this.repository.build(slot, model, documents);
      building = { slot, state: 'building', modelId: model.id, learntAt: documents };
      this.logger.log(
        `semantic model learnt from ${model.documents} documents (${model.terms.length} terms) in ${Date.now() - started} ms: writing every document's vector under it`,
      );
    }
    this.slots = undefined;
    this.building = { modelId: building.modelId, slot: building.slot, written: 0 };
    try {
      const written = await this.index.rewrite(this.records, {
        onPage: (count) => {
          if (this.closed) throw new Error('the server is stopping');
          this.building!.written += count;
        },
      });
      if (!(await this.repository.activate(building.slot, building.modelId))) return;
      this.slots = undefined;
      this.logger.log(
        `semantic model searched from now on: ${written} documents' vectors written in ${Date.now() - started} ms`,
      );
    } finally {
      this.building = undefined;
    }
  }
}
