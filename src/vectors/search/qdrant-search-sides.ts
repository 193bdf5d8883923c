import { DomainError, ErrorCode } from '../../common/domain-error';
import { RETRY_AFTER_SECONDS } from '../../common/fault';
import type { Embedder } from '../embedders/embedder.interface';
import type { WeightedTerm } from '../lexical/lexical-index';
import { MAX_QUERY_TERMS, type LexicalStore } from '../lexical/lexical.store';
import { queryVector } from '../stores/qdrant/lexical-vectors';
import type { SemanticSlot } from '../stores/qdrant/qdrant-collection';
import { QdrantFailure } from '../stores/qdrant/qdrant-connection';
import type {
  QdrantLexicalIndex,
  SharedAnswer,
  SharedHit,
  SharedSearch,
  VectorQuery,
} from '../stores/qdrant/qdrant-lexical.index';
import { termId } from '../stores/qdrant/term-ids';
import { VectorStoreInitializer } from '../stores/vector-store.initializer';
import { queryTerms } from '../text/analyzer';
import type { Candidate } from './fusion';
import type { SearchMetrics } from './search.metrics';
import {
  type LexicalSide,
  type SearchSides,
  type SideRequest,
  upstream,
  upstreamError,
  type VectorSide,
} from './search-sides';

/** The latent-semantic model searched in Qdrant now, if any (qdrant-semantic.ts). */
export interface SemanticQueries {
  /**
   * The query's vector under the model whose document vectors are searched, and their slot;
   * `undefined` while there is none (the passages' dense vectors answer then).
   */
  queryVector(
    terms: ReadonlyMap<string, number>,
  ): Promise<{ slot: SemanticSlot; vector: Float32Array } | undefined>;
}

/**
 * Searches of one process waiting for Qdrant at most: past them a search is refused at once
 * (503) rather than queued behind a Qdrant that answers slowly, each of them bounded by
 * QDRANT_SEARCH_TIMEOUT_MS.
 */
export const MAX_QDRANT_SEARCHES = 64;

/**
 * The sides of a search with the lexical index in Qdrant (LEXICAL_STORE=qdrant): both asked
 * in one request (QdrantLexicalIndex.search), filters applied inside Qdrant, then the
 * titles and passages of the documents shown read from PostgreSQL (only those: the fusion
 * needs nothing but scores). The query is embedded first, by the latent-semantic model when
 * one is searched, else by the embedder for the passages' dense vectors. Qdrant not answering
 * is 503 UNAVAILABLE with `Retry-After`: there is no other copy of the index to fall back on.
 */
export class QdrantSearchSides implements SearchSides {
  private inFlight = 0;

  constructor(
    private readonly index: QdrantLexicalIndex,
    private readonly lexicalStore: LexicalStore,
    private readonly embedder: Embedder,
    private readonly stores: VectorStoreInitializer,
    private readonly metrics: SearchMetrics,
    private readonly semantic?: SemanticQueries,
  ) {}

  async lexical(request: SideRequest): Promise<LexicalSide> {
    const terms = weighted(request.query);
    const found = await this.ask({ ...scopeOf(request), lexical: queryVector(terms) });
    return { hits: (found.lexical ?? []).map(candidate), lexemes: terms.map((t) => t.term) };
  }

  async vector(request: SideRequest): Promise<Candidate[]> {
    const vector = await this.vectorQuery(request);
    const found = await this.ask({ ...scopeOf(request), vector });
    return (found.vector ?? []).filter((hit) => hit.score > 0).map(candidate);
  }

  async both(request: SideRequest): Promise<{ lexical: LexicalSide; vector: VectorSide }> {
    const terms = weighted(request.query);
    const lexemes = terms.map((t) => t.term);
    let failed: unknown;
    const vector = await this.vectorQuery(request).catch((error: unknown) => {
      if (request.signal?.aborted) throw error;
      failed = error;
      return undefined;
    });
    const found = await this.ask({
      ...scopeOf(request),
      lexical: queryVector(terms),
      vector,
      firstTerms: true,
    });
    // Which of the query's terms the first document holds, by their ids (term-ids.ts).
    const ids = found.firstTermIds;
    const first = { terms: lexemes, held: new Set(lexemes.filter((t) => ids?.has(termId(t)))) };
    const lexical = { hits: (found.lexical ?? []).map(candidate), lexemes, first };
    if (vector === undefined) return { lexical, vector: { failed } };
    return {
      lexical,
      vector: {
        hits: (found.vector ?? []).filter((hit) => hit.score > 0).map(candidate),
        // The semantic vectors are written with the lexical side: none of their hits is behind.
        holdsAll: vector.kind === 'semantic',
      },
    };
  }

  async complete(
    candidates: readonly Candidate[],
    lexemes: string[],
    limit: number,
  ): Promise<Candidate[]> {
    if (candidates.length === 0) return [];
    const unread = candidates.filter((c) => c.chunk === undefined).map((c) => c.documentId);
    const chosen = await this.lexicalStore.passagesFor(
      unread,
      lexemes.map((term) => ({ term, weight: 1 })),
    );
    const shown = await this.lexicalStore.results(
      candidates.map((c) => ({
        documentId: c.documentId,
        score: c.score,
        passage: c.chunk ?? chosen.get(c.documentId) ?? 0,
      })),
      limit,
    );
    const found = new Map(candidates.map((c) => [c.documentId, c]));
    return shown.map((hit) => ({ ...found.get(hit.documentId)!, ...hit, chunk: undefined }));
  }

  /** The vector side's query: the semantic model's when one is searched, else the embedder's. */
  private async vectorQuery(request: SideRequest): Promise<VectorQuery> {
    const semantic = await upstream('the semantic model failed', async () =>
      this.semantic?.queryVector(queryTerms(request.query).terms),
    );
    if (semantic !== undefined) return { kind: 'semantic', ...semantic };
    await upstream('the vector store is not available', () => this.stores.ready());
    const stop = this.metrics.queryEmbeddingDuration.startTimer({
      provider: this.embedder.provider,
    });
    const vector = await upstream('the embedder failed', () =>
      this.embedder.embedQuery(request.query, { signal: request.signal }),
    );
    stop();
    request.signal?.throwIfAborted();
    return { kind: 'dense', vector };
  }

  /** One request to Qdrant, bounded in number and time; its failure named for the caller. */
  private async ask(search: SharedSearch): Promise<SharedAnswer> {
    if (this.inFlight >= MAX_QDRANT_SEARCHES) {
      throw new DomainError(
        ErrorCode.UNAVAILABLE,
        `search is busy: ${this.inFlight} searches wait for Qdrant; retry in a second`,
        { retry_after_seconds: 1 },
      );
    }
    this.inFlight++;
    const stop = this.metrics.searchDuration.startTimer({ store: 'qdrant' });
    try {
      return await this.index.search(search);
    } catch (error) {
      if (error instanceof QdrantFailure && error.transient) {
        const wait = Math.max(1, Math.ceil(error.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
        throw new DomainError(
          ErrorCode.UNAVAILABLE,
          `${error.message}: the search index is not answering right now; retry in ${wait} seconds`,
          { retry_after_seconds: wait },
        );
      }
      throw upstreamError('search failed', error);
    } finally {
      stop();
      this.inFlight--;
    }
  }
}

/** The query's terms, each once at weight 1, at most MAX_QUERY_TERMS (in the query's order). */
function weighted(query: string): WeightedTerm[] {
  return [...queryTerms(query).terms.keys()]
    .slice(0, MAX_QUERY_TERMS)
    .map((term) => ({ term, weight: 1 }));
}

function scopeOf(request: SideRequest): Pick<SharedSearch, 'limit' | 'scope'> {
  return { limit: request.limit, scope: request.scope };
}

/** A hit as a candidate whose title and passage are read only if it is shown. */
function candidate(hit: SharedHit): Candidate {
  return {
    documentId: hit.documentId,
    score: hit.score,
    title: '',
    heading: hit.passage?.heading ?? '',
    content: hit.passage?.content ?? '',
    chunk: hit.passage?.chunkIndex,
  };
}
