// Longer than most files: the store is the one door to the lexical index for the pipeline's
// writes, the searches and the latent-semantic model's lifecycle, which share its replica.
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DomainError, ErrorCode } from '../../common/domain-error';
import { RETRY_AFTER_SECONDS } from '../../common/fault';
import { AppConfig } from '../../config/app-config';
import { EmbeddingsChoice } from '../../config/embeddings-choice';
import { ANALYZER_VERSION, queryTerms, type QueryTerms } from '../text/analyzer';
import { SemanticModelRepository } from './semantic-model.repository';
import { LexicalRecord, encodePostings, joinTerms } from './lexical-record';
import { DocumentFilter, LexicalIndex, WeightedTerm } from './lexical-index';
import { LSA_TRAINER, LsaTrainer, TrainingDocument } from './lsa';
import { LexicalReplica } from './lexical.replica';

/** A document the vector worker has chunked: its passages and its lexical record. */
export interface LexicalWrite {
  readonly documentId: string;
  readonly revision: number;
  readonly tags: readonly string[];
  readonly passages: ReadonlyArray<{ index: number; heading: string; content: string }>;
  readonly record: LexicalRecord;
}

export interface LexicalSearchOptions {
  readonly limit: number;
  /** A normalised folder ending in `/` (see folderOf). */
  readonly folder?: string;
  readonly tags?: readonly string[];
  /** Folders (each ending in `/`) a document must be under one of: what the caller may read. */
  readonly folders?: readonly string[];
}

/** A document found by its words, with its best passage. */
export interface LexicalHit {
  readonly documentId: string;
  readonly title: string;
  readonly heading: string;
  readonly content: string;
  readonly score: number;
  /** The document's current revision waits to be embedded (the vector side lacks it). */
  readonly catchingUp: boolean;
}

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
/** Rows per INSERT: a 1 MiB document of 1300 passages goes in three statements. */
const ROWS_PER_STATEMENT = 500;
/** Extra matches asked for, in case some were deleted a moment ago. */
const SPARE_MATCHES = 5;

/** The latent-semantic model is learnt once the knowledge base holds this many documents... */
export const SEMANTIC_MIN_DOCUMENTS = 50;
/** ...from at most this many of them (a sample fixed by their ids' hashes)... */
const SEMANTIC_SAMPLE = 5000;
/** ...in this many dimensions, over its most frequent terms... */
const SEMANTIC_DIMENSIONS = 64;
const SEMANTIC_TERMS = 20_000;
/**
 * ...and learnt again when their number has doubled or halved, or changed by a tenth and no
 * document has changed for SEMANTIC_QUIET_MS (a bulk load is learnt from once it is over,
 * not every few seconds while it runs: learning takes a worker thread some seconds), at most
 * every SEMANTIC_RETRAIN_MS.
 */
const SEMANTIC_RETRAIN_MS = 30_000;
const SEMANTIC_QUIET_MS = 15_000;
const SEMANTIC_CHECK_MS = 5_000;

/**
 * The lexical side of search (docs/search.md). The vector worker writes each document's
 * passages and lexical record (see lexical-record.ts) in one transaction; every server ranks
 * from its in-memory copy (LexicalReplica) with the exact BM25 of lexical-index.ts, then
 * reads the title and the best passage of the documents it found, alive ones only.
 */
@Injectable()
export class LexicalStore implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('LexicalStore');
  private readonly replica: LexicalReplica;
  private readonly semantic: {
    enabled: boolean;
    training?: Promise<void>;
    lastAttempt: number;
    /** Documents held when the model searched now was learnt. */
    learntAt?: number;
    /** Why the last attempt learnt nothing (too few shared terms), if it failed. */
    failure?: string;
  };
  private timer: NodeJS.Timeout | undefined;
  private readonly kept: SemanticModelRepository;
  private keptModel?: Promise<number | undefined>;
  /**
   * While the index loads and then computes its vectors under the kept model: no model is
   * searched yet, but none is to be learnt either (learning one took a thread a minute at
   * 250 000 documents, beside the load, and replaced the kept model's vectors half-computed).
   */
  private loadingKept = false;
  /** Whether this process queues again what an older analyzer indexed (not a web worker). */
  private readonly requeueHere: boolean;

  constructor(
    private readonly dataSource: DataSource,
    config: AppConfig,
    choice: EmbeddingsChoice,
    @Optional() @Inject(LSA_TRAINER) private readonly trainer?: LsaTrainer,
  ) {
    this.replica = new LexicalReplica(dataSource, { snapshots: config.clusterRole !== 'web' });
    this.kept = new SemanticModelRepository(dataSource);
    this.requeueHere = config.clusterRole !== 'web';
    this.semantic = {
      // A web worker of a cluster asks the vector worker for searches: it learns nothing.
      enabled: choice.lsa(config) && trainer !== undefined && config.clusterRole !== 'web',
      lastAttempt: 0,
    };
  }

  get stats() {
    return this.replica.stats;
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
   * Documents indexed by an older analyzer are queued to be indexed again, and the
   * latent-semantic model is learnt when due from now on.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.requeueHere) await this.requeueOlderAnalyzers();
    if (this.semantic.enabled) {
      this.timer = setInterval(() => this.learnWhenDue(), SEMANTIC_CHECK_MS);
      this.timer.unref();
      this.learnWhenDue();
    }
  }

  private async requeueOlderAnalyzers(): Promise<void> {
    const [{ queued }]: Array<{ queued: number }> = await this.dataSource.query(
      `WITH queued AS (
         UPDATE kb_documents d
            SET vector_status = 'pending', vector_queued_at = now(), vector_attempts = 0,
                vector_next_attempt_at = NULL, vector_error = NULL
           FROM kb_lexical_documents l
          WHERE l.document_id = d.document_id AND l.analyzer <> $1
            AND d.deleted_at IS NULL AND d.vector_status <> 'pending'
         RETURNING 1)
       SELECT count(*)::int AS queued FROM queued`,
      [ANALYZER_VERSION],
    );
    if (queued > 0) {
      this.logger.log(`${queued} documents queued to be indexed again (a new text analyzer)`);
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.semantic.enabled = false;
    await this.semantic.training?.catch(() => undefined);
    await this.replica.close();
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
    if (documents < SEMANTIC_MIN_DOCUMENTS) return;
    if (learntAt !== undefined) {
      const doubled = documents >= learntAt * 2 || documents <= learntAt / 2;
      const quiet = Date.now() - this.replica.lastChange >= SEMANTIC_QUIET_MS;
      const changed = Math.abs(documents - learntAt) >= learntAt / 10;
      if (!doubled && !(changed && quiet)) return;
    }
    if (Date.now() - this.semantic.lastAttempt < SEMANTIC_RETRAIN_MS) return;
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
    const rows: Array<{ terms: string; postings: Buffer }> = await this.dataSource.query(
      `SELECT terms, postings FROM kb_lexical_documents ORDER BY md5(document_id) LIMIT $1`,
      [SEMANTIC_SAMPLE],
    );
    // As stored: the thread decodes them (nothing built for them on this loop).
    const documents: TrainingDocument[] = rows.map((row) => ({
      terms: row.terms,
      postings: row.postings,
    }));
    const model = await this.trainer!.trainLsa(documents, {
      dimensions: SEMANTIC_DIMENSIONS,
      maxTerms: SEMANTIC_TERMS,
    });
    if (!this.semantic.enabled) return;
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
   * replaces a newer one.
   */
  async write(documents: readonly LexicalWrite[], removed: readonly string[] = []): Promise<void> {
    if (documents.length === 0 && removed.length === 0) return;
    const written = await this.dataSource.transaction(async (manager) => {
      // The records first: a document whose newer revision is already indexed (another
      // worker's, after a lease expired) keeps its record and its passages.
      const kept = await storeRecords(manager, documents);
      const current = documents.filter((d) => kept.has(d.documentId));
      await manager.query(`DELETE FROM kb_lexical_documents WHERE document_id = ANY($1::text[])`, [
        removed,
      ]);
      await manager.query(`DELETE FROM kb_passages WHERE document_id = ANY($1::text[])`, [
        [...current.map((d) => d.documentId), ...removed],
      ]);
      const rows = current.flatMap((d) =>
        d.passages.map((p) => [d.documentId, p.index, d.revision, p.heading, p.content]),
      );
      for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
        const part = rows.slice(at, at + ROWS_PER_STATEMENT);
        const column = (k: number) => part.map((row) => row[k]);
        await manager.query(
          `INSERT INTO kb_passages (document_id, chunk_index, revision, title, heading, content)
           SELECT p.document_id, p.chunk_index, p.revision, d.title, p.heading, p.content
             FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[])
                  AS p(document_id, chunk_index, revision, heading, content)
             JOIN kb_documents d ON d.document_id = p.document_id`,
          [column(0), column(1), column(2), column(3), column(4)],
        );
      }
      return kept;
    });
    this.replica.remove(removed);
    await this.replica.apply(
      documents
        .filter((d) => written.has(d.documentId))
        .map((d) => ({
          documentId: d.documentId,
          revision: d.revision,
          tags: d.tags,
          ...d.record,
        })),
    );
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
  ): Promise<{ hits: LexicalHit[]; terms: string[] }> {
    const index = await this.replica.current();
    const terms = weighedTerms(index, queryTerms(query));
    const matches = index.search(terms, options.limit + SPARE_MATCHES, filterOf(options));
    return {
      hits: matches.length === 0 ? [] : await this.results(matches, options.limit),
      terms: terms.map((t) => t.term),
    };
  }

  /** The matches' titles and passages, alive documents only, at most `limit`. */
  private async results(
    matches: ReadonlyArray<{ documentId: string; score: number; passage: number }>,
    limit: number,
  ): Promise<LexicalHit[]> {
    const rows: Array<{
      document_id: string;
      title: string;
      heading: string;
      content: string;
      catching_up: boolean;
      ord: string;
    }> = await this.dataSource.query(...resultsStatement(matches));
    return rows.slice(0, limit).map((row) => ({
      documentId: row.document_id,
      title: row.title,
      heading: row.heading,
      content: row.content,
      score: matches[Number(row.ord) - 1].score,
      catchingUp: row.catching_up,
    }));
  }
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
 * The title and passage of each match, in the matches' order, of alive documents only (one
 * may have been deleted since the index was read); `catching_up` when its current revision
 * waits to be embedded.
 */
export function resultsStatement(
  matches: ReadonlyArray<{ documentId: string; passage: number }>,
): [string, unknown[]] {
  return [
    `SELECT h.document_id, d.title, COALESCE(p.heading, '') AS heading,
            COALESCE(p.content, '') AS content,
            d.vector_status IN ('pending', 'error') AS catching_up, h.ord
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS h(document_id, chunk_index, ord)
       JOIN kb_documents d ON d.document_id = h.document_id AND d.deleted_at IS NULL
       LEFT JOIN kb_passages p ON p.document_id = h.document_id AND p.chunk_index = h.chunk_index
      ORDER BY h.ord`,
    [matches.map((m) => m.documentId), matches.map((m) => m.passage)],
  ];
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

/**
 * Upserts the documents' lexical records; an older revision never replaces a newer one, and
 * the record of the same revision under the same analyzer is kept as it is (the lexical pass
 * wrote it before the batch that embeds the document came to it).
 * The ids of the records stored.
 */
async function storeRecords(
  manager: EntityManager,
  documents: readonly LexicalWrite[],
): Promise<Set<string>> {
  if (documents.length === 0) return new Set();
  const stored: Array<{ document_id: string }> = await manager.query(
    `INSERT INTO kb_lexical_documents AS l
                (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
         SELECT r.document_id, r.revision, $3, r.tags::text[], ARRAY[r.lt, r.lh, r.lb],
                r.passage_lengths::int[], r.terms, r.postings
           FROM unnest($1::text[], $2::int[], $4::text[], $5::int[], $6::int[], $7::int[],
                       $8::text[], $9::text[], $10::bytea[])
                AS r(document_id, revision, tags, lt, lh, lb, passage_lengths, terms, postings)
         ON CONFLICT (document_id) DO UPDATE
            SET revision = EXCLUDED.revision, analyzer = EXCLUDED.analyzer, tags = EXCLUDED.tags,
                lengths = EXCLUDED.lengths, passage_lengths = EXCLUDED.passage_lengths,
                terms = EXCLUDED.terms, postings = EXCLUDED.postings
          WHERE l.revision < EXCLUDED.revision
             OR (l.revision = EXCLUDED.revision AND l.analyzer <> EXCLUDED.analyzer)
         RETURNING document_id`,
    [
      documents.map((d) => d.documentId),
      documents.map((d) => d.revision),
      ANALYZER_VERSION,
      documents.map((d) => arrayLiteral(d.tags.map(quoted))),
      documents.map((d) => d.record.lengths[0]),
      documents.map((d) => d.record.lengths[1]),
      documents.map((d) => d.record.lengths[2]),
      documents.map((d) => arrayLiteral(d.record.passageLengths.map(String))),
      documents.map((d) => joinTerms(d.record.terms)),
      documents.map((d) => encodePostings(d.record)),
    ],
  );
  return new Set(stored.map((row) => row.document_id));
}

function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

function arrayLiteral(items: readonly string[]): string {
  return `{${items.join(',')}}`;
}
