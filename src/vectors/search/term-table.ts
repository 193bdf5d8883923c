import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { idf } from '../lexical/bm25';
import type { FirstHolds } from '../lexical/lexical.store';
import { LexicalRecordsRepository } from '../lexical/lexical-records.repository';
import { modelDue, SEMANTIC_CHECK_MS } from '../semantic/semantic-training';
import { termId } from '../stores/qdrant/term-ids';

/**
 * Each term's document frequency in a sample of the knowledge base: what the fusion reads to
 * weigh the query's terms by their rarity when it asks how much of the query the lexical side's
 * first document covers (docs/search.md, "Fusion"). The same for both lexical stores: Qdrant
 * keeps no document frequency a search could read, and the local index's exact ones would make
 * the two stores rank apart. Terms are kept by their ids (term-ids.ts, as Qdrant's sparse
 * vectors hold them): 8 bytes a term, where a map of their names took some 160 (measured over
 * 100 000 terms), and a server in qdrant mode is held to 25 MB over an empty one's after a
 * restart (performance.md). Two terms of one id count as one, as in Qdrant.
 */
export interface TermFrequencies {
  /** Documents counted. */
  readonly documents: number;
  /** The terms' ids, ascending. */
  readonly ids: Uint32Array;
  /** Documents holding each term of `ids` (a term not there is rarer than any that is). */
  readonly df: Uint32Array;
}

/**
 * Documents the table is counted from at most: the latent-semantic model's sample (the first
 * by the md5 of their ids), whose terms' rarity it learns from as well. On the retrieval bench's
 * corpora (509 and fewer documents) that is every document; there a sample of a fifth of them
 * moved no nDCG@10 row by more than 0.005 (docs/search.md).
 */
export const TERM_SAMPLE = 5000;

/**
 * The table of a sample of `documents` records from each term's count in it (counted in
 * PostgreSQL: lexical-records.repository.ts, `termFrequencySample`).
 */
export function frequenciesOf(
  documents: number,
  counts: ReadonlyArray<{ readonly term: string; readonly df: number }>,
): TermFrequencies {
  const byId = new Map<number, number>();
  for (const { term, df } of counts) {
    const id = termId(term);
    byId.set(id, (byId.get(id) ?? 0) + df);
  }
  const ids = Uint32Array.from(byId.keys()).sort();
  return { documents, ids, df: Uint32Array.from(ids, (id) => byId.get(id)!) };
}

/** How many documents of the sample hold `term`. */
export function dfOf(table: TermFrequencies, term: string): number {
  const id = termId(term);
  let low = 0;
  let high = table.ids.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = table.ids[middle];
    if (at === id) return table.df[middle];
    if (at < id) low = middle + 1;
    else high = middle - 1;
  }
  return 0;
}

/** A term's inverse document frequency, as BM25 gives it (never negative, larger when rarer). */
export function idfOf(table: TermFrequencies, term: string): number {
  return idf(table.documents, dfOf(table, term));
}

/**
 * How much of the query the lexical side's first document covers, from 0 to 1: the share of
 * the query's terms it holds, each weighed by its idf. A document holding only the query's
 * common words covers little of it; 0 when the lexical side found nothing.
 */
export function lexicalCoverage(table: TermFrequencies, { terms, held }: FirstHolds): number {
  let all = 0;
  let found = 0;
  for (const term of terms) {
    const weight = idfOf(table, term);
    all += weight;
    if (held.has(term)) found += weight;
  }
  return all > 0 ? found / all : 0;
}

/**
 * The {@link TermFrequencies} this server searches with: counted from the records in
 * PostgreSQL (the first {@link TERM_SAMPLE} by the md5 of their ids, the sample every server
 * draws alike) once the knowledge base holds the latent-semantic model's minimum of documents,
 * and counted again by the model's rule (semantic-training.ts, `modelDue`) as it grows; none
 * before (the fusion then moves by the sides' scores alone). The sample is read once per
 * counting, never per search. A web worker of a cluster asks the vector worker for searches:
 * it counts nothing.
 */
@Injectable()
export class TermTable implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('TermTable');
  private readonly records: LexicalRecordsRepository;
  private table:
    (TermFrequencies & { readonly learntAt: number; readonly countedAt: Date }) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private counting: Promise<void> | undefined;
  private lastAttempt = 0;
  private readonly startedAt = Date.now();
  private readonly enabled: boolean;
  private closed = false;

  constructor(dataSource: DataSource, config: AppConfig) {
    this.records = new LexicalRecordsRepository(dataSource);
    this.enabled = config.clusterRole !== 'web';
  }

  /** The table searched now, if one has been counted. */
  get current(): TermFrequencies | undefined {
    return this.table;
  }

  /**
   * What the status says of it (`/admin/vectors/status`, `lexical.term_frequencies`): the
   * documents it was counted from, its terms, and when; `null` before the first counting.
   */
  describe(): { documents: number; terms: number; counted_at: string } | null {
    if (this.table === undefined) return null;
    return {
      documents: this.table.documents,
      terms: this.table.ids.length,
      counted_at: this.table.countedAt.toISOString(),
    };
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.timer = setInterval(() => this.countWhenDue(), SEMANTIC_CHECK_MS);
    this.timer.unref();
    this.countWhenDue();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.counting?.catch(() => undefined);
  }

  private countWhenDue(): void {
    if (this.counting || this.closed) return;
    this.counting = this.countIfDue()
      .catch((error: Error) => this.logger.warn(`term frequencies not counted: ${error.message}`))
      .finally(() => (this.counting = undefined));
  }

  private async countIfDue(): Promise<void> {
    const totals = await this.records.totals();
    const due = modelDue({
      documents: totals.documents,
      learntAt: this.table?.learntAt,
      lastChange: totals.changedAt,
      lastAttempt: this.lastAttempt,
      startedAt: this.startedAt,
      now: Date.now(),
    });
    if (!due || this.closed) return;
    this.lastAttempt = Date.now();
    const counts = await this.records.termFrequencySample(TERM_SAMPLE);
    const documents = Math.min(TERM_SAMPLE, totals.documents);
    this.table = {
      ...frequenciesOf(documents, counts),
      learntAt: totals.documents,
      countedAt: new Date(),
    };
    this.logger.log(
      `term frequencies counted from ${documents} documents (${this.table.ids.length} terms) in ${Date.now() - this.lastAttempt} ms`,
    );
  }
}
