import { z } from 'zod';
import { timestampSchema, vectorStatusSchema } from '../documents/document.schemas';

/**
 * The answers of `/admin/vectors`, described once: VectorsAdminService's types are derived
 * from them and the OpenAPI document publishes them (test/published-shapes.e2e-spec.ts
 * checks real answers against it). The parts that other classes report on themselves
 * (listener, worker, embedder, store) are open objects here: each class types its own.
 */

/** What the documents table says about the pipeline: counts, leases, lag, the next errors. */
export const vectorQueueReportSchema = z.object({
  counts: z.record(vectorStatusSchema, z.number().int()).describe('Documents per vector status'),
  leased: z.number().int().describe('Documents currently held by a worker'),
  counts_age_seconds: z
    .number()
    .int()
    .describe(
      'How long ago `counts`, `leased` and `lexical_coverage` were counted (0: for this answer). Each count reads every document: from 50 000 documents on, an answer gives the last count, and one older than 20 times what it took to count (30 s at most) is counted again in the background; one twice as old is counted again for the answer',
    ),
  lag_seconds: z.number().describe('Age of the oldest pending document (0 when none)'),
  errors: z.array(
    z.object({
      document_id: z.string(),
      error: z.string().nullable(),
      attempts: z.number().int(),
      next_attempt_at: timestampSchema.nullable(),
    }),
  ),
});
export type VectorQueueReport = z.output<typeof vectorQueueReportSchema>;

/** `GET /admin/vectors/status`. */
export const vectorsStatusSchema = z
  .object({
    sync_enabled: z.boolean(),
    cluster_role: z
      .enum(['single', 'vector', 'web'])
      .describe(
        'This process in cluster mode (WEB_CONCURRENCY): `listener` and `worker` are its own; only the `vector` worker runs them',
      ),
    ...vectorQueueReportSchema.shape,
    listener: z.record(z.string(), z.unknown()).describe('LISTEN connection state'),
    worker: z.record(z.string(), z.unknown()),
    embedder: z.record(z.string(), z.unknown()).describe('Provider, model, dimensions, last error'),
    store: z.record(z.string(), z.unknown()).describe('Vector store name and readiness'),
    lexical: z
      .object({
        store: z
          .enum(['local', 'qdrant'])
          .describe('Where the lexical side is indexed (LEXICAL_STORE)'),
        loaded: z
          .boolean()
          .describe(
            "Whether this server's in-memory copy is loaded (local: by the first search that asks)",
          ),
        documents: z
          .number()
          .int()
          .describe(
            "Documents indexed: in this server's copy once loaded, else counted in PostgreSQL",
          ),
        terms: z.number().int().describe("Terms of this server's copy (0 with qdrant)"),
        postings: z.number().int().describe("Postings of this server's copy (0 with qdrant)"),
        semantic_model: z
          .object({
            documents: z
              .number()
              .int()
              .nullable()
              .describe(
                'Documents held when it was learnt, or when a model learnt again from as many knew nothing it did not',
              ),
            sample: z.number().int().nullable().describe('Documents it was learnt from'),
            terms: z.number().int().nullable(),
            dimensions: z.number().int().nullable(),
          })
          .catchall(z.unknown())
          .nullable()
          .describe(
            'The latent-semantic model the vector side ranks by with the local embedder (null: none yet, or not used); with qdrant, its slot and a model being written',
          ),
        term_frequencies: z
          .object({
            documents: z.number().int().describe('Documents of the sample it was counted from'),
            terms: z.number().int().describe('Distinct terms in that sample'),
            counted_at: z.string().describe('When this server counted it (ISO 8601)'),
          })
          .nullable()
          .describe(
            "The terms' document frequencies the fusion weighs the lexical side's coverage of a query by, counted by this server from a sample of the records (null: not counted yet, or under 50 documents)",
          ),
      })
      .describe("The lexical index: this server's copy, or the one in Qdrant"),
    lexical_coverage: z
      .object({
        indexed: z.number().int().describe('Documents lexical search finds at their revision'),
        indexable: z
          .number()
          .int()
          .describe('Documents it is to find: alive, with a body, not under VECTOR_SKIP_PREFIXES'),
      })
      .describe(
        'How far lexical search has come, from the database (after a restore: how many it finds yet)',
      ),
    anchor_fields: z
      .object({
        due: z
          .number()
          .int()
          .describe(
            'Anchor fields (the texts of the links to a document) and documents whose links are to be read again: 0 once they are as the links say',
          ),
      })
      .describe('How far the anchor fields of lexical search have come'),
  })
  .catchall(z.unknown());
export type VectorsStatus = z.output<typeof vectorsStatusSchema>;

/** `POST /admin/vectors/reindex`. */
export const reindexResultSchema = z.object({
  queued: z.number().int().describe('Documents queued for embedding'),
  prefix: z.string().nullable(),
});
export type ReindexResult = z.output<typeof reindexResultSchema>;
