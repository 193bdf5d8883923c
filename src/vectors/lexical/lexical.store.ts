// The one door to the lexical side for the pipeline's writes and the searches, and the
// latent-semantic model's lifecycle beside this process's copy of the index.
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  BeforeApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DomainError, ErrorCode } from '../../common/domain-error';
import { RETRY_AFTER_SECONDS } from '../../common/fault';
import { AppConfig } from '../../config/app-config';
import { EmbeddingsChoice } from '../../config/embeddings-choice';
import { queryTerms, type QueryTerms } from '../text/analyzer';
import { SemanticModelRepository } from '../semantic/semantic-model.repository';
import {
  DocumentFilter,
  IndexedLexicalDocument,
  LexicalIndex,
  WeightedTerm,
} from './lexical-index';
import { LSA_TRAINER, LsaTrainer, type TrainingDocument } from '../semantic/lsa';
import { LexicalReplica } from './lexical.replica';
import type { Bm25Averages } from './bm25';
import { LexicalRecordsRepository, type LexicalTotals } from './lexical-records.repository';
import {
  learnModel,
  modelDue,
  stillCurrent,
  vocabularyCovered,
  SEMANTIC_CHECK_MS,
  SEMANTIC_MIN_DOCUMENTS,
} from '../semantic/semantic-training';

export { SEMANTIC_MIN_DOCUMENTS } from '../semantic/semantic-training';
export type { LexicalTotals } from './lexical-records.repository';
import {
  LEXICAL_MIRROR,
  type LexicalHit,
  type LexicalMirror,
  type LexicalSearchOptions,
  type LexicalWrite,
} from './lexical-side';

/** Query terms ranked at most: the rarest (the highest idf) are kept, ties by term. */
export const MAX_QUERY_TERMS = 64;
/** Weight of a compound's term found for a query word the index lacks (`datenbank`). */
const EXPANSION_WEIGHT = 0.3;
/** Terms a missing word expands to at most, the most frequent first. */
const EXPANSIONS_PER_WORD = 8;
/** Words shorter than this are not looked for inside compounds. */
const EXPANDED_WORD_MIN = 5;
/** Words of one query looked for inside compounds at most (each reads the whole dictionary). */
const EXPANDED_WORDS_MAX = 4;
/** Extra matches asked for, in case some were deleted a moment ago. */
const SPARE_MATCHES = 5;

/**
 * The lexical side of search (docs/search.md). The vector worker writes each document's
 * passages and lexical record (see lexical-record.ts) in one transaction; every server ranks
 * from its in-memory copy (LexicalReplica) with the exact BM25 of lexical-index.ts, then
 * reads the title and the best passage of the documents it found, alive ones only.
 */
@Injectable()
export class LexicalStore
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger('LexicalStore');
  private readonly replica: LexicalReplica;
  /** How long the snapshot at stop may take (the replica's default when unset). */
  private readonly stopSnapshotWithinMs: number | undefined;
  private readonly semantic: {
    enabled: boolean;
    training?: Promise<void>;
    lastAttempt: number;
    /** When this process started (it has waited with its model since then at least). */
    readonly startedAt: number;
    /** Documents held when the model searched now was learnt, or last found still current. */
    learntAt?: number;
    /** Why the last attempt learnt nothing (too few shared terms), if it failed. */
    failure?: string;
  };
  private timer: NodeJS.Timeout | undefined;
  private readonly kept: SemanticModelRepository;
  private readonly records: LexicalRecordsRepository;
  private keptModel?: Promise<number | undefined>;
  /**
   * While the index loads and then computes its vectors under the kept model: no model is
   * searched yet, but none is to be learnt either (learning one took a thread a minute at
   * 250 000 documents, beside the load, and replaced the kept model's vectors half-computed).
   */
  private loadingKept = false;

  constructor(
    private readonly dataSource: DataSource,
    config: AppConfig,
    choice: EmbeddingsChoice,
    @Optional() @Inject(LSA_TRAINER) private readonly trainer?: LsaTrainer,
    @Optional() @Inject(LEXICAL_MIRROR) private readonly mirror?: LexicalMirror | null,
  ) {
    // With the index elsewhere (Qdrant) the copy is never loaded, nor its snapshot kept.
    this.replica = new LexicalReplica(dataSource, {
      snapshots: config.clusterRole !== 'web' && !mirror,
    });
    this.stopSnapshotWithinMs = config.stopSnapshotWithinMs;
    this.kept = new SemanticModelRepository(dataSource);
    this.records = new LexicalRecordsRepository(dataSource);
    this.semantic = {
      // A web worker of a cluster asks the vector worker for searches: it learns nothing;
      // with the index in Qdrant, the model's lifecycle is Qdrant's index's.
      enabled:
        choice.lsa(config) && trainer !== undefined && config.clusterRole !== 'web' && !mirror,
      lastAttempt: 0,
      startedAt: Date.now(),
    };
  }

  /** What the index in this process holds (nothing when the index is elsewhere). */
  get stats() {
    return this.replica.stats;
  }

  /** Where the lexical side is indexed. */
  get where(): 'local' | 'qdrant' {
    return this.mirror ? 'qdrant' : 'local';
  }

  /** The semantic model searched, if any (see {@link semanticSearch}). */
  get semanticModel():
    { documents: number; sample: number; dimensions: number; terms: number } | undefined {
    const model = this.replica.semanticModel;
    return (
      model && {
        documents: this.semantic.learntAt ?? model.documents,
        sample: model.documents,
        dimensions: model.dimensions,
        terms: model.terms.length,
      }
    );
  }

  /**
   * The latent-semantic model is learnt when due from now on. (Records an older analyzer
   * wrote are written again by the pipeline's lexical pass: LexicalFirstLane.)
   */
  onApplicationBootstrap(): void {
    if (this.semantic.enabled) {
      this.timer = setInterval(() => this.learnWhenDue(), SEMANTIC_CHECK_MS);
      this.timer.unref();
      this.learnWhenDue();
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.semantic.enabled = false;
    await this.semantic.training?.catch(() => undefined);
  }

  /**
   * After every module's destroy hook, so the pipeline has stopped writing to the index (its
   * snapshot may be written at stop), and before the database pool closes.
   */
  async beforeApplicationShutdown(): Promise<void> {
    // Unset, the replica's own bound applies (a destructuring default).
    await this.replica.close({ withinMs: this.stopSnapshotWithinMs });
  }

  /**
   * Learns the latent-semantic model when the knowledge base has reached
   * {@link SEMANTIC_MIN_DOCUMENTS} and again as it grows (see SEMANTIC_RETRAIN_MS), on a
   * worker thread; then every document's vector is computed under it.
   */
  private learnWhenDue(): void {
    if (!this.semantic.enabled || this.semantic.training) return;
    const { loaded, documents } = this.replica.stats;
    if (this.loadingKept) return;
    if (!loaded) {
      // The copy loads on its first use: this is one. The model kept from an earlier run, if
      // any, is handed to it first, so that a restart searches with it at once rather than
      // learning again, and reads its vectors from the index's snapshot when they are there.
      this.loadingKept = true;
      const started = Date.now();
      this.useKeptModel()
        .then(async (learntAt) => {
          await this.replica.current();
          if (learntAt === undefined || this.replica.semanticModel === undefined) return;
          this.logger.log(
            `semantic model kept from an earlier run (learnt at ${learntAt} documents) in use after ${Date.now() - started} ms`,
          );
        })
        .catch((e: Error) => this.logger.warn(`lexical index: ${e.message}`))
        .finally(() => (this.loadingKept = false));
      return;
    }
    const learntAt = this.replica.semanticModel ? this.semantic.learntAt : undefined;
    const due = modelDue({
      documents,
      learntAt,
      modelId: this.replica.semanticModel?.id,
      lastChange: this.replica.lastChange,
      lastAttempt: this.semantic.lastAttempt,
      startedAt: this.semantic.startedAt,
      now: Date.now(),
    });
    if (!due) return;
    this.semantic.lastAttempt = Date.now();
    this.semantic.training = this.learn(documents)
      .then(() => (this.semantic.failure = undefined))
      .catch((error: Error) => {
        this.semantic.failure = error.message;
        this.logger.warn(`semantic model not learnt: ${error.message}`);
      })
      .finally(() => (this.semantic.training = undefined));
  }

  /**
   * The model kept by an earlier run (semantic-model.repository.ts), used if none is yet; one
   * attempt per process (the index's first load may be asked for by several checks at once).
   */
  private useKeptModel(): Promise<number | undefined> {
    this.keptModel ??= this.loadKeptModel();
    return this.keptModel;
  }

  /** Hands the kept model to the copy (which computes or reads its vectors); when it was learnt. */
  private async loadKeptModel(): Promise<number | undefined> {
    if (this.replica.semanticModel !== undefined || this.semantic.training) return undefined;
    const kept = await this.kept.load();
    if (kept === undefined || this.replica.semanticModel !== undefined) return undefined;
    // Known before the vectors are computed, so that no check meanwhile learns it again.
    this.semantic.learntAt = kept.learntAt;
    await this.replica.useModel(kept.model);
    return kept.learntAt;
  }

  private async learn(documentsHeld: number): Promise<void> {
    const started = Date.now();
    const model = await learnModel(this.records, this.trainer!);
    if (!this.semantic.enabled) return;
    const searched = this.replica.semanticModel;
    if (searched !== undefined && stillCurrent(searched, model)) {
      // Nothing to compute again: the model searched is as good; counted from here on.
      this.semantic.learntAt = documentsHeld;
      await this.kept
        .confirm(searched.id, documentsHeld)
        .catch((e: Error) => this.logger.warn(`semantic model not kept: ${e.message}`));
      this.logger.log(
        `semantic model learnt again from ${model.documents} documents in ${Date.now() - started} ms: the one searched knows ${(100 * vocabularyCovered(searched, model)).toFixed(2)} % of its vocabulary and stays`,
      );
      return;
    }
    await this.replica.useModel(model);
    this.semantic.learntAt = documentsHeld;
    await this.kept
      .save(model, documentsHeld)
      .catch((e: Error) => this.logger.warn(`semantic model not kept: ${e.message}`));
    this.logger.log(
      `semantic model learnt from ${model.documents} documents (${model.terms.length} terms, ${model.dimensions} dimensions) in ${Date.now() - started} ms`,
    );
  }

  /**
   * Makes these passages and records the documents' only ones, and removes those of
   * `removed` (deleted or skipped documents), in one transaction; an older revision never
   * replaces a newer one. With the index in Qdrant, it is written inside that transaction.
   */
  async write(
    documents: readonly LexicalWrite[],
    removed: readonly string[] = [],
  ): Promise<number> {
    if (documents.length === 0 && removed.length === 0) return 0;
    const written = await this.records.write(documents, removed, this.mirror);
    this.replica.remove(removed);
    await this.replica.apply(
      written.map((d) => ({
        documentId: d.documentId,
        revision: d.revision,
        tags: d.tags,
        anchorStamp: d.anchorStamp,
        ...d.record,
      })),
    );
    return written.length;
  }

  /** The matches' titles and passages, alive documents only, at most `limit`. */
  results(
    matches: ReadonlyArray<{ documentId: string; score: number; passage: number }>,
    limit: number,
  ): Promise<LexicalHit[]> {
    return this.records.results(matches, limit);
  }

  /**
   * For documents found outside this process's index (in Qdrant), the passage of each that
   * holds most of the query's terms (see LexicalRecordsRepository.passagesFor).
   */
  passagesFor(
    documentIds: readonly string[],
    terms: readonly WeightedTerm[],
  ): Promise<Map<string, number>> {
    return this.records.passagesFor(documentIds, terms);
  }

  /** The records' counts as kept by trigger. */
  totals(): Promise<LexicalTotals> {
    return this.records.totals();
  }

  /** The records of at most `limit` documents, a sample fixed by the hashes of their ids. */
  trainingSample(limit: number): Promise<TrainingDocument[]> {
    return this.records.trainingSample(limit);
  }

  /** Every record, a page at a time (see LexicalRecordsRepository.eachRecordPage). */
  eachRecordPage(
    prefix: string,
    each: (
      manager: EntityManager,
      documents: readonly IndexedLexicalDocument[],
      averages: Bm25Averages,
    ) => Promise<void>,
  ): Promise<number> {
    return this.records.eachRecordPage(prefix, each);
  }

  /**
   * The documents nearest `query` under the latent-semantic model, best first, at most
   * `limit`, each with its passage holding most of the query's words (its first when none);
   * `undefined` when the model is not used (fewer than {@link SEMANTIC_MIN_DOCUMENTS}
   * documents, or LOCAL_SEMANTIC=off). Rejects with UNAVAILABLE while a knowledge base large
   * enough for one waits for its first model (seconds after a start).
   */
  async semanticSearch(
    query: string,
    options: LexicalSearchOptions,
  ): Promise<LexicalHit[] | undefined> {
    if (!this.semantic.enabled) return undefined;
    const analysed = queryTerms(query);
    const matches = await this.replica.semanticSearch(
      analysed.terms,
      options.limit + SPARE_MATCHES,
      filterOf(options),
    );
    if (matches === undefined) {
      // Too small to learn from, or nothing to learn (the last attempt failed): the hashed
      // vectors answer meanwhile.
      const small = this.replica.stats.documents < SEMANTIC_MIN_DOCUMENTS;
      if (small || this.semantic.failure !== undefined) return undefined;
      this.learnWhenDue();
      throw new DomainError(
        ErrorCode.UNAVAILABLE,
        `the semantic model is being learnt from the documents; retry in ${RETRY_AFTER_SECONDS} seconds`,
        { retry_after_seconds: RETRY_AFTER_SECONDS },
      );
    }
    if (matches.length === 0) return [];
    // Each shows its passage holding most of the query's words, if it holds any.
    const index = await this.replica.current();
    const weighted = weighedTerms(index, analysed);
    return this.results(
      matches.map((m) => ({ ...m, passage: index.passageFor(m.documentId, weighted) })),
      options.limit,
    );
  }

  /**
   * The best documents for `query`, best first, at most `limit`, with the query's terms (for
   * highlighting). Nothing in the query is syntax: any text is a valid query.
   */
  async search(
    query: string,
    options: LexicalSearchOptions,
  ): Promise<{ hits: LexicalHit[]; terms: string[]; first: FirstHolds }> {
    const index = await this.replica.current();
    const analysed = queryTerms(query);
    const terms = weighedTerms(index, analysed);
    const matches = index.search(terms, options.limit + SPARE_MATCHES, filterOf(options));
    const hits = matches.length === 0 ? [] : await this.results(matches, options.limit);
    // Which of the query's terms the first document holds: the fusion's coverage (fusion.ts).
    const asked = [...analysed.terms.keys()].slice(0, MAX_QUERY_TERMS);
    const held = hits.length === 0 ? new Set<string>() : index.heldTerms(hits[0].documentId, asked);
    return { hits, terms: terms.map((t) => t.term), first: { terms: asked, held } };
  }
}

/** Which of the query's terms the lexical side's first document holds. */
export interface FirstHolds {
  /** The query's analysed terms, as written (no expansion). */
  readonly terms: readonly string[];
  readonly held: ReadonlySet<string>;
}

/** The folder, tags and readable folders filter of a search, if it has one. */
function filterOf(options: LexicalSearchOptions): DocumentFilter | undefined {
  const tags = options.tags && options.tags.length > 0 ? options.tags : undefined;
  const { folder, folders } = options;
  return folder === undefined && tags === undefined && folders === undefined
    ? undefined
    : { folder, tags, folders };
}

/**
 * A query's analysed terms (`queryTerms`) with their weights: each term once (weight 1); a
 * word of five letters or more that no document holds also looks for the terms that contain
 * it (a compound's part: `datenbank` finds `datenbanksicherungen`), weight 0.3, for the
 * first {@link EXPANDED_WORDS_MAX} such words (a word as written beside its stem is not one:
 * its stem is asked for already); at most {@link MAX_QUERY_TERMS} of those the index holds,
 * the rarest.
 */
export function weighedTerms(index: LexicalIndex, query: QueryTerms): WeightedTerm[] {
  const weighted = new Map<string, number>();
  let expanded = 0;
  for (const term of query.terms.keys()) {
    weighted.set(term, 1);
    if (query.written.has(term) || index.frequency(term) > 0) continue;
    if ([...term].length < EXPANDED_WORD_MIN || !/^\p{L}+$/u.test(term)) continue;
    if (expanded++ >= EXPANDED_WORDS_MAX) continue;
    for (const found of index.termsContaining(term, EXPANSIONS_PER_WORD)) {
      if (!weighted.has(found)) weighted.set(found, EXPANSION_WEIGHT);
    }
  }
  return [...weighted.entries()]
    .map(([term, weight]) => ({ term, weight, df: index.frequency(term) }))
    .filter(({ df }) => df > 0)
    .sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    .slice(0, MAX_QUERY_TERMS)
    .map(({ term, weight }) => ({ term, weight }));
}
