import type { QdrantClient } from '@qdrant/js-client-rest';
import type { EntityManager } from 'typeorm';
import type { Bm25Averages } from '../../lexical/bm25';
import type { LexicalTotals } from '../../lexical/lexical-records.repository';
import type { TrainingDocument } from '../../semantic/lsa';
import type { IndexedLexicalDocument } from '../../lexical/lexical-index';
import type { LexicalMirror, LexicalWrite } from '../../lexical/lexical-side';
import type { VectorHit } from '../vector-store.interface';
import { ancestorsOf, pointId } from '../vector-payload';
import {
  DENSE_VECTOR,
  LEXICAL_VECTOR,
  QdrantCollection,
  SEMANTIC_VECTORS,
  type SemanticSlot,
} from './qdrant-collection';
import { qdrantCall, qdrantRead } from './qdrant-connection';
import { chunkHit } from './qdrant.vector-store';
import { lexicalVector, type SparseVector } from './lexical-vectors';
import { type Scope, scopeFilter } from './scope-filter';
import { wireVector } from './wire-vector';

/** The document's own point: its lexical and semantic vectors (chunk index -1: no passage's). */
export function documentPointId(documentId: string): string {
  return pointId(documentId, -1);
}

/** What a document's own point carries. */
interface DocumentPayload {
  document_id: string;
  kind: 'document';
  revision: number;
  tags: string[];
  ancestors: string[];
}

/** Each document's vectors under the semantic models the collection holds (qdrant-semantic.ts). */
export interface SemanticVectors {
  /**
   * Inside the transaction writing the records: the documents' vectors under each model
   * whose vectors the collection holds or is being given, by slot; taken so that no model
   * is made the searched one while these are written.
   */
  vectorsFor(
    manager: EntityManager,
    documents: readonly LexicalWrite[],
  ): Promise<Array<Partial<Record<SemanticSlot, Float32Array>>>>;
}

/** The vector side asked of Qdrant with the lexical side. */
export type VectorQuery =
  | {
      /** A document's semantic vector (one per document). */
      readonly kind: 'semantic';
      readonly slot: SemanticSlot;
      readonly vector: Float32Array;
    }
  | {
      /** The passages' dense vectors (grouped by document here). */
      readonly kind: 'dense';
      readonly vector: Float32Array;
    };

export interface SharedSearch {
  /** The lexical side's query, or none. */
  readonly lexical?: SparseVector;
  readonly vector?: VectorQuery;
  /** Documents wanted from each side. */
  readonly limit: number;
  readonly scope: Scope;
  /**
   * Also the term ids of the lexical side's first document (its sparse vector's indices), for
   * the fusion's coverage: a third query of the same batch, one point with its vector.
   */
  readonly firstTerms?: boolean;
}

/** A document found by one side: its score, and with dense vectors its best passage. */
export interface SharedHit {
  readonly documentId: string;
  readonly score: number;
  readonly passage?: VectorHit;
}

/**
 * What a shared search found: each side's documents, and with `firstTerms` the term ids of
 * the lexical side's first document (empty when it found none).
 */
export interface SharedAnswer {
  readonly lexical?: SharedHit[];
  readonly vector?: SharedHit[];
  readonly firstTermIds?: ReadonlySet<number>;
}

/** The lexical records, as the rebuild of every document's point reads them (lexical.store.ts). */
export interface RecordPages {
  totals(): Promise<LexicalTotals>;
  /**
   * Every record under `prefix` ('' for all), a page at a time, each page in a transaction
   * that holds its rows (so no writer changes them meanwhile) while `each` runs, with the mean
   * lengths then; how many.
   */
  eachRecordPage(
    prefix: string,
    each: (
      manager: EntityManager,
      documents: readonly IndexedLexicalDocument[],
      averages: Bm25Averages,
    ) => Promise<void>,
  ): Promise<number>;
  /** The records of at most `limit` documents, a sample fixed by the hashes of their ids. */
  trainingSample(limit: number): Promise<TrainingDocument[]>;
}

/** Sparse entries per upsert request at most (some 15 bytes each as JSON: under 1 MB). */
const MAX_ENTRIES_PER_UPSERT = 50_000;
/** Passages asked for per document wanted, grouped here (a document has several). */
const PASSAGES_PER_DOCUMENT = 4;
const MAX_PASSAGES = 1000;

/**
 * The lexical side of search in Qdrant (LEXICAL_STORE=qdrant): a point per document in the
 * shared collection, its sparse vector the BM25 shares of its terms (lexical-vectors.ts,
 * Qdrant's idf modifier doing the rest) and its latent-semantic vectors, written inside the
 * transaction that writes the document's lexical record in PostgreSQL (so two writers of one
 * document reach Qdrant in the order they commit), and searched with the vector side in one
 * request. No process holds any of it in memory: every replica and worker searches the same
 * index the moment it is written.
 */
export class QdrantLexicalIndex implements LexicalMirror {
  private semantic: SemanticVectors | undefined;

  constructor(
    readonly collection: QdrantCollection,
    private readonly searchClient: QdrantClient,
  ) {}

  /** Writes each document's semantic vectors with its lexical one from now on. */
  useSemantic(semantic: SemanticVectors): void {
    this.semantic = semantic;
  }

  async mirror(
    manager: EntityManager,
    documents: readonly LexicalWrite[],
    removed: readonly string[],
    averages: Bm25Averages,
  ): Promise<void> {
    const client = this.collection.client;
    const name = this.collection.name;
    if (removed.length > 0) {
      // Every point of a removed document: its own and its passages'.
      await qdrantCall('delete', () =>
        client.delete(name, {
          wait: true,
          filter: { must: [{ key: 'document_id', match: { any: [...removed] } }] },
        }),
      );
    }
    if (documents.length === 0) return;
    const semantic = (await this.semantic?.vectorsFor(manager, documents)) ?? [];
    const points = documents.map((document, i) => {
      const vectors: Record<string, SparseVector | number[]> = {
        [LEXICAL_VECTOR]: lexicalVector(document.record, averages),
      };
      for (const [slot, vector] of Object.entries(semantic[i] ?? {})) {
        vectors[SEMANTIC_VECTORS[slot as SemanticSlot]] = wireVector(vector);
      }
      return {
        id: documentPointId(document.documentId),
        vector: vectors,
        payload: {
          document_id: document.documentId,
          kind: 'document',
          revision: document.revision,
          tags: [...document.tags],
          ancestors: ancestorsOf(document.documentId),
        } satisfies DocumentPayload,
      };
    });
    // In requests of bounded size: a batch of large documents holds hundreds of thousands of
    // terms, past what Qdrant takes in one request (32 MB by default).
    for (let start = 0; start < points.length;) {
      let end = start;
      let entries = 0;
      while (end < points.length && (end === start || entries < MAX_ENTRIES_PER_UPSERT)) {
        entries += (points[end].vector[LEXICAL_VECTOR] as SparseVector).indices.length;
        end++;
      }
      const part = points.slice(start, end);
      await qdrantCall('upsert of the lexical side', () =>
        client.upsert(name, { wait: true, points: part }),
      );
      start = end;
    }
  }

  /**
   * Writes again the point of every document under `prefix` from its record in PostgreSQL
   * (with today's mean lengths and every semantic model's vector): after the collection was
   * made anew, for a reindex, or for a new semantic model. `onPage` is told each page's size
   * (and may stop the walk by throwing). How many points were written.
   */
  rewrite(
    records: RecordPages,
    { prefix = '', onPage }: { prefix?: string; onPage?: (count: number) => void } = {},
  ): Promise<number> {
    return records.eachRecordPage(prefix, async (manager, page, averages) => {
      await this.mirror(manager, page.map(asWrite), [], averages);
      onPage?.(page.length);
    });
  }

  /**
   * Both sides in one request (Qdrant's batch query), each at most `limit` documents, best
   * first, filtered inside Qdrant by the scope. The dense side asks for passages and keeps
   * each document's best (a few passages a document wanted; asked again, grouped by Qdrant,
   * only when they came from too few documents).
   */
  async search(request: SharedSearch): Promise<SharedAnswer> {
    const filter = scopeFilter(request.scope);
    const searches: Array<Record<string, unknown>> = [];
    const firstTerms = request.lexical !== undefined && request.firstTerms === true;
    if (request.lexical !== undefined) {
      searches.push({
        query: request.lexical,
        using: LEXICAL_VECTOR,
        limit: request.limit,
        with_payload: ['document_id'],
        ...(filter ? { filter } : {}),
      });
    }
    if (firstTerms) {
      // The first point again, with its sparse vector: asking it of the search above would
      // bring every candidate's vector (thousands of terms a document) for one's.
      searches.push({
        query: request.lexical,
        using: LEXICAL_VECTOR,
        limit: 1,
        with_payload: false,
        with_vector: [LEXICAL_VECTOR],
        ...(filter ? { filter } : {}),
      });
    }
    // A query with nothing the model knows has no direction: nothing is near it.
    const vector = request.vector && norm(request.vector.vector) > 0 ? request.vector : undefined;
    const dense = vector?.kind === 'dense';
    const passages = Math.min(request.limit * PASSAGES_PER_DOCUMENT, MAX_PASSAGES);
    if (vector !== undefined) {
      searches.push({
        query: Array.from(vector.vector),
        using: dense ? DENSE_VECTOR : SEMANTIC_VECTORS[(vector as { slot: SemanticSlot }).slot],
        limit: dense ? passages : request.limit,
        with_payload: dense
          ? ['document_id', 'chunk_index', 'revision', 'heading', 'content']
          : ['document_id'],
        ...(filter ? { filter } : {}),
      });
    }
    if (searches.length === 0) return { vector: request.vector ? [] : undefined };
    const answers = await qdrantRead('search', () =>
      this.searchClient.queryBatch(this.collection.name, {
        searches: searches as Parameters<QdrantClient['queryBatch']>[1]['searches'],
      }),
    );
    const points = answers.map((answer) => answer.points);
    const lexical = request.lexical !== undefined ? points.shift()!.map(documentHit) : undefined;
    const first = firstTerms ? termIdsOf(points.shift()![0]) : undefined;
    const shared = first === undefined ? { lexical } : { lexical, firstTermIds: first };
    if (vector === undefined) return { ...shared, vector: request.vector ? [] : undefined };
    const found = points.shift()!;
    if (!dense) return { ...shared, vector: found.map(documentHit) };
    let best = bestPassages(found.map(chunkHit), request.limit);
    if (best.length < request.limit && found.length === passages) {
      best = await this.densePerDocument(vector.vector, request.limit, filter);
    }
    return { ...shared, vector: best };
  }

  private async densePerDocument(
    vector: Float32Array,
    limit: number,
    filter: ReturnType<typeof scopeFilter>,
  ): Promise<SharedHit[]> {
    const result = await qdrantRead('search', () =>
      this.searchClient.queryGroups(this.collection.name, {
        query: Array.from(vector),
        using: DENSE_VECTOR,
        group_by: 'document_id',
        group_size: 1,
        limit,
        ...(filter ? { filter } : {}),
        with_payload: ['document_id', 'chunk_index', 'revision', 'heading', 'content'],
      }),
    );
    return result.groups.flatMap((group) => {
      const hit = group.hits[0];
      if (!hit) return [];
      const passage = chunkHit(hit);
      return [{ documentId: passage.documentId, score: passage.score, passage }];
    });
  }
}

/** The term ids of a point's lexical vector; none when there is no point. */
function termIdsOf(point: { vector?: unknown } | undefined): ReadonlySet<number> {
  const vectors = point?.vector as Record<string, { indices?: number[] }> | undefined;
  return new Set(vectors?.[LEXICAL_VECTOR]?.indices ?? []);
}

function documentHit(point: {
  id: string | number;
  score: number;
  payload?: Record<string, unknown> | null;
}): SharedHit {
  return { documentId: String(point.payload?.document_id ?? point.id), score: point.score };
}

/** Each document's best passage among `hits` (best first), the first `limit` documents. */
function bestPassages(hits: readonly VectorHit[], limit: number): SharedHit[] {
  const seen = new Set<string>();
  const best: SharedHit[] = [];
  for (const hit of hits) {
    if (seen.has(hit.documentId)) continue;
    seen.add(hit.documentId);
    best.push({ documentId: hit.documentId, score: hit.score, passage: hit });
    if (best.length === limit) break;
  }
  return best;
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

function asWrite(document: IndexedLexicalDocument): LexicalWrite {
  return {
    documentId: document.documentId,
    revision: document.revision,
    tags: document.tags,
    passages: [],
    record: document,
  };
}
