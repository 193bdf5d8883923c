import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { DomainError, ErrorCode } from '../common/domain-error';
import { faultOf, safeMessage } from '../common/fault';
import { parseInput } from '../common/validation';
import { validatePrefix } from '../documents/document-id';
import { DocumentsService } from '../documents/documents.service';
import { EMBEDDER, Embedder } from './embedder.interface';
import { snippetOf } from './snippet';
import { VectorStoreInitializer } from './vector-store.initializer';
import { folderOf } from './vector-payload';
import { VECTOR_STORE, VectorHit, VectorStore } from './vector-store.interface';
import { VectorsMetrics } from './vectors.metrics';

export const SEARCH_DEFAULT_LIMIT = 10;
export const SEARCH_MAX_LIMIT = 50;
export const SEARCH_MAX_QUERY_CHARS = 2000;

/** What `search_knowledge` and `GET /search` ask. */
export interface SearchInput {
  /** Text to look for; 1 to 2000 characters. */
  query: string;
  /** Documents wanted, 1 to 50; default 10. */
  limit?: number;
  /** Only documents under this folder (whole segments: `a/b` and `a/b/` are the same). */
  prefix?: string;
  /** Only documents carrying every one of these tags. */
  tags?: string[];
  /** Cancels the search (the embedder's request for the query is dropped). */
  signal?: AbortSignal;
}

export interface SearchResult {
  document_id: string;
  title: string;
  /** Cosine similarity of the document's best chunk to the query (higher is closer). */
  score: number;
  /** Excerpt of that chunk. */
  snippet: string;
}

export interface SearchResponse {
  results: SearchResult[];
}

const searchSchema = z.object({
  query: z
    .string()
    .max(SEARCH_MAX_QUERY_CHARS)
    .refine((q) => q.trim() !== '', 'must not be empty'),
  limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional(),
  prefix: z.string().optional(),
  tags: z.array(z.string().trim().min(1, 'must not be empty').max(100)).max(50).optional(),
});

/**
 * Semantic search over the knowledge base, shared by the MCP tool `search_knowledge` and
 * `GET /search`: embeds the query, asks the store for each document's best chunk, keeps
 * only documents that are alive in PostgreSQL (the store may still hold a document deleted
 * a moment ago) and takes their titles from there.
 */
@Injectable()
export class SearchService {
  constructor(
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    private readonly stores: VectorStoreInitializer,
    private readonly documents: DocumentsService,
    private readonly metrics: VectorsMetrics,
  ) {}

  /**
   * Best documents first, at most `limit`. Rejects with INVALID_ARGUMENT naming the field
   * for bad input, UPSTREAM_ERROR when the embedder or the store fails.
   */
  async search(input: SearchInput): Promise<SearchResponse> {
    const parsed = parseInput(searchSchema, input);
    const limit = parsed.limit ?? SEARCH_DEFAULT_LIMIT;
    const folder = folderOf(validatePrefix(parsed.prefix));
    const tags = parsed.tags === undefined ? undefined : [...new Set(parsed.tags)];

    await upstream('the vector store is not available', () => this.stores.ready());
    const [vector] = await upstream('the embedder failed', () =>
      this.embedder.embed([parsed.query], { signal: input.signal }),
    );
    input.signal?.throwIfAborted();

    // Over-fetch a little: a hit may belong to a document deleted since it was indexed.
    let want = Math.min(limit * 2 + 5, 500);
    let alive: { hit: VectorHit; title: string }[] = [];
    for (let round = 0; round < 3; round++) {
      const stop = this.metrics.searchDuration.startTimer({ store: this.store.name });
      const hits = await upstream('the vector store failed', () =>
        this.store.search(vector, { limit: want, folder, tags }),
      );
      stop();
      const titles = await this.documents.aliveTitles(hits.map((h) => h.documentId));
      alive = hits.flatMap((hit) => {
        const title = titles.get(hit.documentId);
        // A score of 0 or less means nothing in common with the query: not a result.
        return title === undefined || !(hit.score > 0) ? [] : [{ hit, title }];
      });
      const exhausted = hits.length < want || !(hits[hits.length - 1].score > 0);
      if (alive.length >= limit || exhausted) break;
      want *= 4;
    }
    return {
      results: alive.slice(0, limit).map(({ hit, title }) => ({
        document_id: hit.documentId,
        title,
        score: Math.round(hit.score * 10_000) / 10_000,
        snippet: snippetOf(hit.content, parsed.query),
      })),
    };
  }
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
