import { DocumentsService } from '../../documents/documents.service';
import type { Access } from '../../documents/access';
import type { Embedder } from '../embedders/embedder.interface';
import type { LexicalStore } from '../lexical/lexical.store';
import type { Scope } from '../stores/qdrant/scope-filter';
import { VectorStoreInitializer } from '../stores/vector-store.initializer';
import type { VectorHit, VectorStore } from '../stores/vector-store.interface';
import type { Candidate } from './fusion';
import type { SearchMetrics } from './search.metrics';
import {
  type LexicalSide,
  type SearchSides,
  type SideRequest,
  upstream,
  type VectorSide,
} from './search-sides';

/**
 * The sides of a search with the lexical index in this process (LEXICAL_STORE=local): the
 * lexical side from the in-memory BM25 index (lexical/), the vector side from the
 * latent-semantic model's vectors beside it when it has one, otherwise the vector store's
 * nearest passages to the query's embedding. The two run at once; every candidate comes back
 * whole (title, passage) and alive.
 */
export class LocalSearchSides implements SearchSides {
  constructor(
    private readonly lexicalStore: LexicalStore,
    private readonly embedder: Embedder,
    private readonly store: VectorStore,
    private readonly stores: VectorStoreInitializer,
    private readonly documents: DocumentsService,
    private readonly metrics: SearchMetrics,
  ) {}

  async lexical(request: SideRequest): Promise<LexicalSide> {
    const stop = this.metrics.searchDuration.startTimer({ store: 'lexical' });
    const found = await upstream('lexical search failed', () =>
      this.lexicalStore.search(request.query, { limit: request.limit, ...request.scope }),
    );
    stop();
    return { hits: found.hits, lexemes: found.terms, first: found.first };
  }

  async both(request: SideRequest): Promise<{ lexical: LexicalSide; vector: VectorSide }> {
    const [lexical, vector] = await Promise.all([
      this.lexical(request),
      this.vectorSide(request).then(
        (side): VectorSide => side,
        (error: unknown): VectorSide => {
          if (request.signal?.aborted) throw error;
          return { failed: error };
        },
      ),
    ]);
    return { lexical, vector };
  }

  complete(candidates: readonly Candidate[], _lexemes: string[], limit: number) {
    return Promise.resolve(candidates.slice(0, limit));
  }

  /**
   * The vector side's best documents for the query, alive ones only, at most `limit`: with
   * the local embedder and a latent-semantic model learnt (LOCAL_SEMANTIC), that model's;
   * otherwise the store's nearest to the query's embedding.
   */
  async vector(request: SideRequest): Promise<Candidate[]> {
    return (await this.vectorSide(request)).hits;
  }

  private async vectorSide(
    request: SideRequest,
  ): Promise<{ hits: Candidate[]; holdsAll: boolean }> {
    const { query, limit, scope, signal, access } = request;
    const stopSemantic = this.metrics.searchDuration.startTimer({ store: 'semantic' });
    const semantic = await upstream('semantic search failed', () =>
      this.lexicalStore.semanticSearch(query, { limit, ...scope }),
    );
    if (semantic !== undefined) {
      stopSemantic();
      return { hits: semantic.map((hit) => ({ ...hit, catchingUp: false })), holdsAll: true };
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
    return { hits: await this.nearest(vector, limit, scope, access), holdsAll: false };
  }

  /**
   * The store's documents nearest `vector`, alive ones only. Over-fetches a little: a hit
   * may belong to a document deleted since it was indexed (rare: the worker removes its
   * vectors at once); more are asked for when too few are left.
   */
  private async nearest(
    vector: Float32Array,
    limit: number,
    scope: Scope,
    access: Access,
  ): Promise<Candidate[]> {
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
}
