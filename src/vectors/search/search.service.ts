import { Inject, Injectable, Logger } from '@nestjs/common';
import { z } from 'zod';
import { callVectorWorker } from '../../cluster/vector-worker.client';
import { DomainError, ErrorCode } from '../../common/domain-error';
import { faultOf, safeMessage } from '../../common/fault';
import { parseInput } from '../../common/validation';
import { validatePrefix } from '../../documents/document-id';
import { DocumentsService } from '../../documents/documents.service';
import { DocumentSources } from '../../documents/document-sources';
import { EMBEDDER, Embedder } from '../embedders/embedder.interface';
import { AppConfig } from '../../config/app-config';
import { EmbeddingsChoice } from '../../config/embeddings-choice';
import type { Access } from '../../documents/access';
import { LexicalStore } from '../lexical/lexical.store';
import { highlight, snippetOf } from './snippet';
import { VectorStoreInitializer } from '../stores/vector-store.initializer';
import { folderOf } from '../stores/vector-payload';
import { VECTOR_STORE, VectorHit, VectorStore } from '../stores/vector-store.interface';
import { type Candidate, fuse } from './fusion';
import { readsAsKeywords } from './query-kind';
import { SearchMetrics } from './search.metrics';
import { SEARCH_MODES, type SearchResponse, type SearchResult } from './search.schemas';

export const SEARCH_DEFAULT_LIMIT = 10;
export const SEARCH_MAX_LIMIT = 50;
export const SEARCH_MAX_QUERY_CHARS = 2000;
/**
 * In hybrid search, a document only the vector side found is shown when its fused score is
 * at least this share of the best result's (docs/search.md): nearest neighbours that are not
 * answers do not pad a page.
 */
export const VECTOR_ONLY_FLOOR = 0.25;
/**
 * Likewise for a document only the lexical side found: under a tenth of the best, it shares
 * a word or two with the query (often a common one) and nothing of its meaning. Chosen on half
 * A of the retrieval set (nDCG@10 0.7021 → 0.7023; half B 0.7304 → 0.7305, with the packaged
 * model), where it leaves out a third of a result each query that no judge named.
 */
export const LEXICAL_ONLY_FLOOR = 0.1;

/**
 * What `search_knowledge` and `GET /search` ask, and the rules of each field: text to look
 * for (not blank), documents wanted (default {@link SEARCH_DEFAULT_LIMIT}), only documents
 * under a folder (whole segments: `a/b` and `a/b/` are the same) or carrying every one of
 * some tags, and the rankings used (`hybrid` by default: lexical and vector fused).
 */
export const searchSchema = z.object({
  query: z
    .string()
    .max(SEARCH_MAX_QUERY_CHARS)
    .refine((q) => q.trim() !== '', 'must not be empty'),
  limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional(),
  prefix: z.string().optional(),
  tags: z.array(z.string().trim().min(1, 'must not be empty').max(100)).max(50).optional(),
  mode: z.enum(SEARCH_MODES).optional(),
});

export type SearchInput = z.input<typeof searchSchema> & {
  /** Cancels the search (the embedder's request for the query is dropped). */
  signal?: AbortSignal;
  /**
   * What the caller may read: both sides rank only documents under its readable folders
   * (the condition is part of each side's search, so `limit` results still come back).
   */
  access: Access;
};

/**
 * Search over the knowledge base, shared by the MCP tool `search_knowledge` and
 * `GET /search` (docs/search.md): the lexical side (BM25 over documents and their best
 * passages, lexical/) and the vector side (the store's nearest passages), fused by their
 * normalised scores (`SEARCH_VECTOR_WEIGHT`, over the first `SEARCH_CANDIDATES` of each
 * side). Each document appears once, with its best passage (the lexical side's, which holds
 * the query's words, when both found it). Only documents alive in PostgreSQL are answered
 * (the store may still hold one deleted a moment ago). A web worker of a cluster asks the
 * vector worker (vector-worker.calls.ts), which holds the only copy of the index.
 */
@Injectable()
export class SearchService {
  private readonly logger = new Logger('SearchService');

  constructor(
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    private readonly stores: VectorStoreInitializer,
    private readonly documents: DocumentsService,
    private readonly lexical: LexicalStore,
    private readonly metrics: SearchMetrics,
    private readonly config: AppConfig,
    private readonly choice: EmbeddingsChoice,
    private readonly sources: DocumentSources,
  ) {}

  /**
   * Best documents first, at most `limit`. Rejects with INVALID_ARGUMENT naming the field
   * for bad input; in `vector` mode with UPSTREAM_ERROR when the embedder or the store
   * fails (`hybrid` then answers from the lexical side, `degraded`).
   */
  async search(input: SearchInput): Promise<SearchResponse> {
    const answer = await this.rank(input);
    const provenance = await this.sources.provenance(answer.results.map((r) => r.document_id));
    if (provenance.size === 0) return answer;
    return {
      ...answer,
      results: answer.results.map((result) => {
        const source = provenance.get(result.document_id);
        return source === undefined ? result : { ...result, source_uri: source.source_uri };
      }),
    };
  }

  private async rank(input: SearchInput): Promise<SearchResponse> {
    const parsed = parseInput(searchSchema, input);
    if (this.config.clusterRole === 'web') {
      // In cluster mode the vector worker alone holds the index and the embedder.
      const access = { read: input.access.read, write: input.access.write };
      return callVectorWorker('search', { input: parsed, access }, { signal: input.signal });
    }
    const limit = parsed.limit ?? SEARCH_DEFAULT_LIMIT;
    const mode = parsed.mode ?? 'hybrid';
    const folder = folderOf(validatePrefix(parsed.prefix));
    const tags = parsed.tags === undefined ? undefined : [...new Set(parsed.tags)];
    const readable = input.access.readableUnder(folder ?? '');
    if (readable !== 'all' && readable.length === 0) return { mode, results: [] };
    const scope = { folder, tags, folders: readable === 'all' ? undefined : readable };

    if (mode === 'vector') {
      const hits = await this.vectorSide(parsed.query, limit, scope, input.signal, input.access);
      return { mode, results: this.present(hits, parsed.query) };
    }
    if (mode === 'lexical') {
      const { hits, lexemes } = await this.lexicalSide(parsed.query, limit, scope);
      return { mode, results: this.present(hits, parsed.query, lexemes) };
    }
    const depth = Math.max(limit, this.config.searchCandidates);
    const [lexical, vector] = await Promise.all([
      this.lexicalSide(parsed.query, depth, scope),
      this.vectorSide(parsed.query, depth, scope, input.signal, input.access).then(
        (hits) => ({ hits }),
        (error: unknown) => {
          if (input.signal?.aborted) throw error;
          return { failed: error };
        },
      ),
    ]);
    if ('failed' in vector) {
      const reason = degradedReason(vector.failed);
      this.logger.warn(`hybrid search answered from the lexical side: ${reason}`);
      return {
        mode,
        degraded: true,
        degraded_reason: reason,
        results: this.present(lexical.hits.slice(0, limit), parsed.query, lexical.lexemes),
      };
    }
    const weights = this.choice.vectorWeights;
    const weight = readsAsKeywords(parsed.query) ? weights.keywords : weights.sentences;
    const fused = fuse(lexical.hits, vector.hits, weight, {
      floor: VECTOR_ONLY_FLOOR,
      lexicalFloor: LEXICAL_ONLY_FLOOR,
    }).slice(0, limit);
    const results = this.present(fused, parsed.query, lexical.lexemes);
    // Documents written moments ago are found by their words before the vector side has
    // them: the answer says so.
    // (The semantic model's side holds every document the lexical side does.)
    const found = new Set(vector.hits.map((hit) => hit.documentId));
    const catchingUp = this.lexical.semanticModel
      ? 0
      : fused.filter((hit) => hit.catchingUp && !found.has(hit.documentId)).length;
    return catchingUp === 0
      ? { mode, results }
      : {
          mode,
          results,
          degraded: true,
          degraded_reason: `${catchingUp} of the results ${catchingUp === 1 ? 'is' : 'are'} not embedded yet (the vector index is catching up): found by their words only`,
        };
  }

  private async lexicalSide(
    query: string,
    limit: number,
    scope: Scope,
  ): Promise<{ hits: Candidate[]; lexemes: string[] }> {
    const stop = this.metrics.searchDuration.startTimer({ store: 'lexical' });
    const found = await upstream('lexical search failed', () =>
      this.lexical.search(query, { limit, ...scope }),
    );
    stop();
    return { hits: found.hits, lexemes: found.terms };
  }

  /**
   * The vector side's best documents for the query, alive ones only, at most `limit`: with
   * the local embedder and a latent-semantic model learnt (LOCAL_SEMANTIC), that model's;
   * otherwise the store's nearest to the query's embedding.
   */
  private async vectorSide(
    query: string,
    limit: number,
    scope: Scope,
    signal: AbortSignal | undefined,
    access: Access,
  ): Promise<Candidate[]> {
    const stopSemantic = this.metrics.searchDuration.startTimer({ store: 'semantic' });
    const semantic = await upstream('semantic search failed', () =>
      this.lexical.semanticSearch(query, { limit, ...scope }),
    );
    if (semantic !== undefined) {
      stopSemantic();
      return semantic.map((hit) => ({ ...hit, catchingUp: false }));
    }
    await upstream('the vector store is not available', () => this.stores.ready());
    const stopEmbedding = this.metrics.queryEmbeddingDuration.startTimer({
      provider: this.embedder.provider,
    });
    const vector = await upstream('the embedder failed', () =>
      this.embedder.embedQuery(query, { signal }),
    );
    stopEmbedding();
    signal?.throwIfAborted();

    // Over-fetch a little: a hit may belong to a document deleted since it was indexed
    // (rare: the worker removes its vectors at once); more are asked for when too few are left.
    let want = Math.min(limit + 5, 500);
    let alive: Candidate[] = [];
    for (let round = 0; round < 3; round++) {
      const stop = this.metrics.searchDuration.startTimer({ store: this.store.name });
      const hits = await upstream('the vector store failed', () =>
        this.store.search(vector, { limit: want, ...scope }),
      );
      stop();
      const unknown = hits.filter((hit) => hit.title === undefined);
      const titles =
        unknown.length === 0
          ? undefined
          : await this.documents.aliveTitles(
              unknown.map((h) => h.documentId),
              access,
            );
      alive = hits.flatMap((hit: VectorHit) => {
        const title = hit.title === undefined ? titles?.get(hit.documentId) : hit.title;
        // A score of 0 or less means nothing in common with the query: not a result.
        return title === undefined || title === null || !(hit.score > 0)
          ? []
          : [
              {
                documentId: hit.documentId,
                title,
                score: hit.score,
                heading: hit.heading,
                content: hit.content,
              },
            ];
      });
      const exhausted = hits.length < want || !(hits[hits.length - 1].score > 0);
      if (alive.length >= limit || exhausted) break;
      want *= 4;
    }
    return alive.slice(0, limit);
  }

  /** Results with snippets, the matched words in bold when `lexemes` are given. */
  private present(
    hits: readonly Candidate[],
    query: string,
    lexemes?: readonly string[],
  ): SearchResult[] {
    return hits.map((hit) => {
      const snippet = snippetOf(hit.content, query);
      return {
        document_id: hit.documentId,
        title: hit.title,
        score: Math.round(hit.score * 1_000_000) / 1_000_000,
        heading_path: hit.heading,
        snippet: lexemes === undefined ? snippet : highlight(snippet, lexemes),
      };
    });
  }
}

/** Which documents a search ranks: under a folder, with tags, under readable folders. */
interface Scope {
  readonly folder?: string;
  readonly tags?: string[];
  readonly folders?: readonly string[];
}

function degradedReason(error: unknown): string {
  if (error instanceof DomainError) return error.message;
  return 'the vector side failed';
}

/**
 * Runs a call to a dependency: a database outage becomes UNAVAILABLE, any other failure
 * UPSTREAM_ERROR naming `what` failed, without the addresses or paths its message may hold.
 */
async function upstream<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if ((error as Error).name === 'AbortError' || (error as Error).name === 'APIUserAbortError') {
      throw error;
    }
    const fault = faultOf(error);
    if (fault !== undefined) throw fault;
    throw new DomainError(
      ErrorCode.UPSTREAM_ERROR,
      `${what}: ${safeMessage((error as Error).message)}`,
    );
  }
}
