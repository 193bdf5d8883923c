import { Inject, Injectable, Logger } from '@nestjs/common';
import { z } from 'zod';
import { callVectorWorker } from '../../cluster/vector-worker.client';
import { DomainError } from '../../common/domain-error';
import { parseInput } from '../../common/validation';
import { validatePrefix } from '../../documents/document-id';
import { DocumentSources } from '../../documents/document-sources';
import { AppConfig } from '../../config/app-config';
import { EmbeddingsChoice } from '../../config/embeddings-choice';
import type { Access } from '../../documents/access';
import { highlight, snippetOf } from './snippet';
import { queryTerms } from '../text/analyzer';
import { folderOf } from '../stores/vector-payload';
import { type Candidate, commitmentDepth, fuse, vectorWeightFor } from './fusion';
import { queryKind, type QueryKind } from './query-kind';
import { lexicalCoverage, TermTable } from './term-table';
import { type LexicalSide, SEARCH_SIDES, type SearchSides } from './search-sides';
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

/** Which of the embedder's weights a query of each kind starts from. */
const PRIOR_OF = {
  keywords: 'keywords',
  codeSentence: 'codeSentences',
  sentence: 'sentences',
} as const satisfies Record<QueryKind, 'keywords' | 'codeSentences' | 'sentences'>;

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
 * passages) and the vector side (the nearest documents to the query's meaning), fused by
 * their normalised scores (over the first `SEARCH_CANDIDATES` of each side, with a weight of
 * the vector side chosen per query from the query's kind and how sure each side is, or
 * `SEARCH_VECTOR_WEIGHT`). Where the sides come from is the {@link SearchSides}' business: this process's index
 * and the vector store, or Qdrant for both. Each document appears once, with its best passage
 * (the lexical side's, which holds the query's words, when both found it). Only documents
 * alive in PostgreSQL are answered (an index may still hold one deleted a moment ago). A web
 * worker of a cluster asks the vector worker (vector-worker.calls.ts).
 */
@Injectable()
export class SearchService {
  private readonly logger = new Logger('SearchService');

  constructor(
    @Inject(SEARCH_SIDES) private readonly sides: SearchSides,
    private readonly config: AppConfig,
    private readonly choice: EmbeddingsChoice,
    private readonly sources: DocumentSources,
    private readonly terms: TermTable,
  ) {}

  /**
   * Best documents first, at most `limit`. Rejects with INVALID_ARGUMENT naming the field
   * for bad input; in `vector` mode with UPSTREAM_ERROR when the embedder or the store
   * fails (`hybrid` then answers from the lexical side, `degraded`); with UNAVAILABLE (and
   * when to retry) while an index it needs is not answering.
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
    const request = {
      query: parsed.query,
      limit,
      scope,
      signal: input.signal,
      access: input.access,
    };

    if (mode === 'vector') {
      const hits = await this.sides.vector(request);
      // Found by meaning, not by words: the query's words a passage happens to hold are
      // still shown in bold, as on the other sides.
      const words = [...queryTerms(parsed.query).terms.keys()];
      const shown = await this.complete(hits, [], limit);
      return { mode, results: this.present(shown, parsed.query, words) };
    }
    if (mode === 'lexical') {
      const { hits, lexemes } = await this.sides.lexical(request);
      const shown = await this.complete(hits, lexemes, limit);
      return { mode, results: this.present(shown, parsed.query, lexemes) };
    }
    const depth = Math.max(limit, this.config.searchCandidates);
    const { lexical, vector } = await this.sides.both({ ...request, limit: depth });
    if ('failed' in vector) {
      const reason = degradedReason(vector.failed);
      this.logger.warn(`hybrid search answered from the lexical side: ${reason}`);
      const shown = await this.complete(lexical.hits, lexical.lexemes, limit);
      return {
        mode,
        degraded: true,
        degraded_reason: reason,
        results: this.present(shown, parsed.query, lexical.lexemes),
      };
    }
    // The query's kind and the embedder set the weight this query starts from; how sharply
    // each side's scores stand out, and how much of the query the lexical side's first
    // document holds, move it (docs/search.md, "Fusion").
    const weights = this.choice.vectorWeights;
    const prior = weights[PRIOR_OF[queryKind(parsed.query)]];
    const weight = weights.fixed
      ? prior
      : vectorWeightFor(
          prior,
          lexical.hits,
          vector.hits,
          commitmentDepth(depth, folder),
          this.coverage(lexical),
        );
    const fused = fuse(lexical.hits, vector.hits, weight, {
      floor: VECTOR_ONLY_FLOOR,
      lexicalFloor: LEXICAL_ONLY_FLOOR,
      depth,
      // A cosine of 0 means no match for the hashed vectors and the latent-semantic model,
      // not for an embedding model (fusion.ts, normaliser).
      vectorFromZero: this.choice.kind === 'hashing',
    });
    const shown = await this.complete(fused, lexical.lexemes, limit);
    const results = this.present(shown, parsed.query, lexical.lexemes);
    // Documents written moments ago are found by their words before the vector side has
    // them: the answer says so.
    const found = new Set(vector.hits.map((hit) => hit.documentId));
    const catchingUp = vector.holdsAll
      ? 0
      : shown.filter((hit) => hit.catchingUp && !found.has(hit.documentId)).length;
    return catchingUp === 0
      ? { mode, results }
      : {
          mode,
          results,
          degraded: true,
          degraded_reason: `${catchingUp} of the results ${catchingUp === 1 ? 'is' : 'are'} not embedded yet (the vector index is catching up): found by their words only`,
        };
  }

  /**
   * How much of the query the lexical side's first document covers (term-table.ts), or
   * `undefined` before the server has counted its terms' frequencies.
   */
  private coverage(lexical: LexicalSide): number | undefined {
    const table = this.terms.current;
    if (table === undefined || lexical.first === undefined) return undefined;
    return lexicalCoverage(table, lexical.first);
  }

  /**
   * The first `limit` candidates shown, whole and alive: a few more are handed to the sides,
   * in case some were deleted a moment ago.
   */
  private complete(candidates: readonly Candidate[], lexemes: string[], limit: number) {
    return this.sides.complete(candidates.slice(0, limit + SPARE_RESULTS), lexemes, limit);
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

/** Candidates read beyond those shown, in case some were deleted a moment ago. */
const SPARE_RESULTS = 5;

function degradedReason(error: unknown): string {
  if (error instanceof DomainError) return error.message;
  return 'the vector side failed';
}
