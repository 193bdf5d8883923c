import { DomainError, ErrorCode } from '../../common/domain-error';
import { faultOf, RETRY_AFTER_SECONDS, safeMessage } from '../../common/fault';
import { storeDown } from '../stores/vector-store.interface';
import type { Access } from '../../documents/access';
import type { Scope } from '../stores/qdrant/scope-filter';
import type { FirstHolds } from '../lexical/lexical.store';
import type { Candidate } from './fusion';

/** What one side of a search is asked. */
export interface SideRequest {
  readonly query: string;
  /** Documents wanted. */
  readonly limit: number;
  readonly scope: Scope;
  /** Cancels the search (the embedder's request for the query is dropped). */
  readonly signal?: AbortSignal;
  readonly access: Access;
}

/** The lexical side's documents, and the query's terms (to highlight in snippets). */
export interface LexicalSide {
  readonly hits: Candidate[];
  readonly lexemes: string[];
  /**
   * The query's analysed terms (at most MAX_QUERY_TERMS, as written: no expansion) and those
   * of them the first hit's document holds, for the fusion's coverage (term-table.ts); given
   * by `both`, in the answer the side's search already makes.
   */
  readonly first?: FirstHolds;
}

/**
 * The vector side's documents, or why it failed (hybrid search then answers without it).
 * `holdsAll`: it ranks every document the lexical side holds (a semantic model's vectors,
 * computed from the same records), so none of its hits is "catching up".
 */
export type VectorSide =
  { readonly hits: Candidate[]; readonly holdsAll: boolean } | { readonly failed: unknown };

/**
 * Where the two sides of a search come from (docs/search.md): this process's lexical index and
 * the vector store (`local`, search-sides.local.ts), or both from Qdrant in one request
 * (`qdrant`, qdrant-search-sides.ts). The search service fuses and presents what either gives.
 */
export interface SearchSides {
  lexical(request: SideRequest): Promise<LexicalSide>;
  vector(request: SideRequest): Promise<Candidate[]>;
  /** Both sides; the vector side's failure is an answer, the lexical side's an error. */
  both(request: SideRequest): Promise<{ lexical: LexicalSide; vector: VectorSide }>;
  /**
   * The candidates to be shown, in their order, with their titles and passages, those deleted
   * meanwhile left out, at most `limit`. The sides may rank before reading what they show.
   */
  complete(
    candidates: readonly Candidate[],
    lexemes: string[],
    limit: number,
  ): Promise<Candidate[]>;
}

/** Injection token of the {@link SearchSides} chosen by LEXICAL_STORE. */
export const SEARCH_SIDES = Symbol('SEARCH_SIDES');

/**
 * Runs a call to a dependency: a database outage becomes UNAVAILABLE, any other failure
 * UPSTREAM_ERROR naming `what` failed, without the addresses or paths its message may hold.
 */
export async function upstream<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw upstreamError(what, error);
  }
}

/** The error a caller sees for a dependency's failure (see {@link upstream}). */
export function upstreamError(what: string, error: unknown): unknown {
  if (error instanceof DomainError) return error;
  // A store that does not answer (Qdrant down or slow): retrying helps.
  if (storeDown(error)) {
    return new DomainError(
      ErrorCode.UNAVAILABLE,
      `${what}: ${safeMessage((error as Error).message)}; retry in ${RETRY_AFTER_SECONDS} seconds`,
      { retry_after_seconds: RETRY_AFTER_SECONDS },
    );
  }
  if ((error as Error).name === 'AbortError' || (error as Error).name === 'APIUserAbortError') {
    return error;
  }
  return (
    faultOf(error) ??
    new DomainError(ErrorCode.UPSTREAM_ERROR, `${what}: ${safeMessage((error as Error).message)}`)
  );
}
