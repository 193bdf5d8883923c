import { Logger } from '@nestjs/common';
import type { QdrantClient } from '@qdrant/js-client-rest';
import { qdrantCall, qdrantFailure, qdrantRead } from './qdrant-connection';

/** The dense vector of each passage, in a collection that also holds the lexical side. */
export const DENSE_VECTOR = 'dense';
/** The lexical side: each document's BM25 shares as a sparse vector, idf applied by Qdrant. */
export const LEXICAL_VECTOR = 'lexical';
/**
 * Each document's vector under a latent-semantic model: two named vectors, so that the
 * vectors of a model learnt anew are written beside those of the model searched, which is
 * replaced only when they all are (qdrant-semantic.ts).
 */
export const SEMANTIC_VECTORS = { a: 'semantic_a', b: 'semantic_b' } as const;
export type SemanticSlot = keyof typeof SEMANTIC_VECTORS;

/**
 * What the collection holds:
 * - `vectors`: one unnamed dense vector a passage (the vector store alone, as collections made
 *   before the lexical side could live in Qdrant);
 * - `shared`: a named dense vector a passage, and a point a document with the lexical sparse
 *   vector and the semantic vectors (LEXICAL_STORE=qdrant).
 */
export type CollectionLayout = 'vectors' | 'shared';

/** How the server makes a collection: applied at creation only. */
export interface CollectionSettings {
  readonly shards: number;
  readonly replicationFactor: number;
  readonly writeConsistency: number;
  /**
   * Segments Qdrant's optimisers keep in each shard. Left to Qdrant (as many as its CPUs), a
   * small node merges each newly indexed segment into the one that holds everything, building
   * its whole graph again every few thousand passages: while 10 000 documents arrived on a
   * 2-core node its optimisers indexed 501 101 points for a collection of 57 723 (134 s of
   * Qdrant's CPU); with 8 segments 158 326 (78 s). Smaller graphs are also searched more
   * completely: the passages' nearest 10 under the default embedder agreed with an exact
   * search 0.97 of the time at 47 018 passages, against 0.76 in 2 segments, for some 4 ms more
   * of Qdrant's CPU a search (docs/operations.md).
   */
  readonly segments: number;
  /** The latent-semantic model's dimensions (the semantic vectors' size). */
  readonly semanticDimensions: number;
  /**
   * Whether the passages' dense vectors get Qdrant's search graph (HNSW). Not when the vector
   * side ranks by the latent-semantic model (the default embedder): its hashed passage vectors
   * are then searched only while no model exists yet (a knowledge base of under 50 documents,
   * or its first model being learnt), where Qdrant's exact search is as fast, and building
   * their graph was most of Qdrant's CPU while documents arrived (docs/operations.md).
   */
  readonly passageGraph: boolean;
}

/** Qdrant's graph settings for vectors searched without a graph: no links, none by payload. */
const NO_GRAPH = { m: 0, payload_m: 0 } as const;
/** Qdrant's own defaults, for a graph turned on again. */
const DEFAULT_GRAPH = { m: 16, payload_m: 16 } as const;

/** Payload fields filtered on, each with a keyword index. */
const KEYWORD_FIELDS = ['document_id', 'ancestors', 'tags', 'kind'] as const;

/** The collection as found (or made) at start, for the stores and the status endpoint. */
export interface CollectionState {
  readonly layout: CollectionLayout;
  /** Made by this start: it holds nothing yet. */
  readonly created: boolean;
}

/**
 * The one Qdrant collection a server uses, made at start when missing with the configured
 * shards, replication and write consistency (and left as it is when it exists: a difference
 * is logged, never fixed by dropping data). The passages' dense vectors and, in the `shared`
 * layout, the documents' lexical and semantic vectors live in it: one collection, so that a
 * search asks for both sides in one request.
 */
export class QdrantCollection {
  private readonly logger = new Logger('QdrantCollection');
  private state: CollectionState | undefined;

  constructor(
    readonly client: QdrantClient,
    readonly name: string,
    /** The layout a collection made now gets; an existing one keeps its own. */
    private readonly wanted: CollectionLayout,
    private readonly settings: CollectionSettings,
  ) {}

  /** Whether this server's vector side searches the passages' dense vectors (see `passageGraph`). */
  get passagesSearched(): boolean {
    return this.settings.passageGraph;
  }

  /** The layout found or made by {@link ensure}; `undefined` before it succeeded. */
  get layout(): CollectionLayout | undefined {
    return this.state?.layout;
  }

  /**
   * Makes the collection if it is missing and checks one that exists: dense vectors of the
   * embedder's size and cosine distance, and in the `shared` layout the lexical sparse vector
   * with Qdrant's idf and the semantic vectors. Rejects, naming the fix, when an existing
   * collection cannot hold what this server writes.
   */
  async ensure(embedder: { id: string; dimensions: number }): Promise<CollectionState> {
    const { exists } = await qdrantRead('collection check', () =>
      this.client.collectionExists(this.name),
    );
    let created = false;
    if (!exists) created = await this.create(embedder.dimensions);
    const info = await qdrantRead('collection info', () => this.client.getCollection(this.name));
    const params = info.config.params;
    const layout = this.check(params, embedder);
    if (!created) {
      this.logDifferences({
        ...params,
        default_segment_number: info.config.optimizer_config?.default_segment_number,
      });
      await this.checkPassageGraph(params, info.config.hnsw_config.m, layout);
    }
    const schema = info.payload_schema ?? {};
    for (const field of KEYWORD_FIELDS) {
      if (schema[field]) continue;
      await qdrantCall(`payload index creation (${field})`, () =>
        this.client.createPayloadIndex(this.name, {
          field_name: field,
          field_schema: 'keyword',
          wait: true,
        }),
      );
    }
    this.state = { layout, created };
    return this.state;
  }

  /** Whether the collection was made now (false when another server made it meanwhile). */
  private async create(dimensions: number): Promise<boolean> {
    const dense = {
      size: dimensions,
      distance: 'Cosine' as const,
      ...(this.settings.passageGraph ? {} : { hnsw_config: NO_GRAPH }),
    };
    const semantic = { size: this.settings.semanticDimensions, distance: 'Cosine' as const };
    try {
      await this.client.createCollection(this.name, {
        ...(this.wanted === 'shared'
          ? {
              vectors: {
                [DENSE_VECTOR]: dense,
                [SEMANTIC_VECTORS.a]: semantic,
                [SEMANTIC_VECTORS.b]: semantic,
              },
              sparse_vectors: { [LEXICAL_VECTOR]: { modifier: 'idf' } },
            }
          : { vectors: dense }),
        shard_number: this.settings.shards,
        replication_factor: this.settings.replicationFactor,
        write_consistency_factor: this.settings.writeConsistency,
        optimizers_config: { default_segment_number: this.settings.segments },
      });
      this.logger.log(
        `created the Qdrant collection "${this.name}" (${this.wanted === 'shared' ? 'passages and the lexical side' : 'passages'}; ${this.settings.shards} shards, replication factor ${this.settings.replicationFactor}, write consistency ${this.settings.writeConsistency}, ${this.settings.segments} segments a shard${this.settings.passageGraph ? '' : "; no search graph over the passages' vectors, which the latent-semantic model leaves unsearched"})`,
      );
      return true;
    } catch (error) {
      // Another server may have made it at the same moment: the check that follows decides.
      const again = await qdrantRead('collection check', () =>
        this.client.collectionExists(this.name),
      );
      if (!again.exists) throw qdrantFailure('collection creation', error);
      return false;
    }
  }

  private check(
    params: { vectors?: unknown; sparse_vectors?: unknown },
    embedder: { id: string; dimensions: number },
  ): CollectionLayout {
    const vectors = (params.vectors ?? {}) as Record<string, unknown>;
    const dense = passageParams(params.vectors);
    const layout = layoutOf(params.vectors);
    const fix = `set QDRANT_COLLECTION to a new collection (every document is indexed into it), or delete this one`;
    if (dense?.size !== embedder.dimensions || dense.distance !== 'Cosine') {
      throw new Error(
        `Qdrant collection "${this.name}" holds ${dense?.size ?? 'no'}-dimensional ${dense?.distance ?? ''} passage vectors, but the embedder (${embedder.id}) makes ${embedder.dimensions}-dimensional ones for cosine search: ${fix}`,
      );
    }
    if (this.wanted === 'shared') {
      const sparse = ((params.sparse_vectors ?? {}) as Record<string, { modifier?: string }>)[
        LEXICAL_VECTOR
      ];
      const semantic = [SEMANTIC_VECTORS.a, SEMANTIC_VECTORS.b].map(
        (name) => vectors[name] as { size?: number } | undefined,
      );
      if (
        layout !== 'shared' ||
        sparse?.modifier !== 'idf' ||
        semantic.some((v) => v?.size !== this.settings.semanticDimensions)
      ) {
        throw new Error(
          `Qdrant collection "${this.name}" was made for passage vectors only and cannot hold the lexical side (LEXICAL_STORE=qdrant): ${fix}`,
        );
      }
    }
    return layout;
  }

  /**
   * An existing collection's graph over the passages' vectors, against what this server's
   * vector side needs: turned on when the passages are searched and it is off (without it
   * every search reads every passage; Qdrant builds it in the background, nothing is
   * rewritten), left as it is, with a word, when it is on and no longer needed.
   */
  private async checkPassageGraph(
    params: { vectors?: unknown },
    collectionM: number,
    layout: CollectionLayout,
  ): Promise<void> {
    const graph = passageGraphOf(params.vectors, collectionM);
    if (this.settings.passageGraph && !graph) {
      // The unnamed vector of a passages-only collection is updated under the empty name.
      const key = layout === 'shared' ? DENSE_VECTOR : '';
      await qdrantCall('graph of the passages', () =>
        this.client.updateCollection(this.name, {
          vectors: { [key]: { hnsw_config: DEFAULT_GRAPH } },
        }),
      );
      this.logger.log(
        `the Qdrant collection "${this.name}" had no search graph over the passages' vectors, which this server's vector side searches: Qdrant builds it now, in the background`,
      );
    } else if (!this.settings.passageGraph && graph) {
      this.logger.log(
        `the Qdrant collection "${this.name}" keeps a search graph over the passages' vectors, which the latent-semantic model leaves unsearched: docs/operations.md says how to drop it (Qdrant's CPU and memory)`,
      );
    }
  }

  private logDifferences(params: {
    shard_number?: number;
    replication_factor?: number;
    write_consistency_factor?: number;
    default_segment_number?: number;
  }): void {
    const found: Array<[string, number | undefined, number]> = [
      ['QDRANT_SHARDS', params.shard_number, this.settings.shards],
      ['QDRANT_REPLICATION_FACTOR', params.replication_factor, this.settings.replicationFactor],
      ['QDRANT_WRITE_CONSISTENCY', params.write_consistency_factor, this.settings.writeConsistency],
      ['QDRANT_SEGMENTS', params.default_segment_number, this.settings.segments],
    ];
    for (const [variable, actual, wanted] of found) {
      if (actual === undefined || actual === wanted) continue;
      this.logger.warn(
        `the Qdrant collection "${this.name}" has ${actual === 0 ? "0 (Qdrant's own choice)" : actual} where ${variable} says ${wanted}: the setting applies when the server creates a collection; the existing one is used as it is (Qdrant's API changes it: docs/operations.md)`,
      );
    }
  }

  /**
   * What the status endpoint shows of the collection: its layout, points, state and the
   * settings it was made with (Qdrant's, whatever this server's configuration says).
   */
  async describe(): Promise<Record<string, unknown>> {
    const info = await qdrantRead('collection info', () => this.client.getCollection(this.name));
    const params = info.config.params;
    return {
      name: this.name,
      layout: this.state?.layout ?? layoutOf(params.vectors),
      status: info.status,
      points: info.points_count ?? null,
      shards: params.shard_number ?? null,
      replication_factor: params.replication_factor ?? null,
      write_consistency: params.write_consistency_factor ?? null,
      segments: info.config.optimizer_config?.default_segment_number ?? null,
      passage_graph: passageGraphOf(params.vectors, info.config.hnsw_config.m),
    };
  }
}

/** The passages' vector as a collection's config holds it (`vectors`: its params). */
interface PassageParams {
  size?: number;
  distance?: string;
  hnsw_config?: { m?: number | null } | null;
}

/** A collection's layout from its vectors: one unnamed vector holds the passages alone. */
function layoutOf(vectors: unknown): CollectionLayout {
  return (vectors as PassageParams | undefined)?.size === undefined ? 'shared' : 'vectors';
}

/** The passages' vector's params: the named `dense` vector, or the unnamed one. */
function passageParams(vectors: unknown): PassageParams | undefined {
  const found = (vectors ?? {}) as PassageParams & Record<string, PassageParams | undefined>;
  return layoutOf(vectors) === 'shared' ? found[DENSE_VECTOR] : found;
}

/** Whether the passages' vectors have a search graph: their own HNSW settings, else the collection's. */
function passageGraphOf(vectors: unknown, collectionM: number): boolean {
  return (passageParams(vectors)?.hnsw_config?.m ?? collectionM) > 0;
}
