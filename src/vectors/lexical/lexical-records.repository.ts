import type { DataSource, EntityManager } from 'typeorm';
import { escapeLike } from '../../documents/document-id';
import { ANALYZER_VERSION } from '../text/analyzer';
import { type Bm25Averages, passageShare } from './bm25';
import type { IndexedLexicalDocument, WeightedTerm } from './lexical-index';
import {
  encodePostings,
  joinTerms,
  postingAt,
  termIndexOf,
  withAnchorField,
} from './lexical-record';
import { anchorFieldOfRow, documentOf, type LexicalRow, SELECT_DOCUMENTS } from './lexical-rows';
import type { TrainingDocument } from '../semantic/lsa';
import { packPosting, passageCount, passageIndex } from './posting-store';
import type { LexicalHit, LexicalMirror, LexicalWrite } from './lexical-side';

/** Rows per INSERT: a 1 MiB document of 1300 passages goes in three statements. */
const ROWS_PER_STATEMENT = 500;
/** Records a page of {@link LexicalRecordsRepository.eachRecordPage}. */
const RECORD_PAGE = 256;

/**
 * The lexical tables' SQL: each document's record (`kb_lexical_documents`), its passages
 * (`kb_passages`) and the counts kept of them (`kb_lexical_stats`), written in one
 * transaction by the pipeline, read by searches (the titles and passages shown) and by the
 * latent-semantic model's learning.
 */
export class LexicalRecordsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Makes these passages and records the documents' only ones, and removes those of
   * `removed` (deleted or skipped documents), in one transaction; an older revision never
   * replaces a newer one; the documents whose records were written, each with its anchor
   * field kept beside it (docs/search.md, "Anchor text"). With `mirror`, the index outside
   * this database is told inside the transaction.
   */
  async write(
    documents: readonly LexicalWrite[],
    removed: readonly string[],
    mirror?: LexicalMirror | null,
  ): Promise<LexicalWrite[]> {
    return this.dataSource.transaction(async (manager) => {
      // The records first: a document whose newer revision is already indexed (another
      // worker's, after a lease expired) keeps its record and its passages.
      const kept = await storeRecords(manager, documents);
      const current = documents.filter((d) => kept.has(d.documentId));
      // Before the passages are replaced: they hold the titles the documents were indexed under.
      await markAnchorsDue(manager, {
        written: current.map((d) => d.documentId),
        added: current.filter((d) => kept.get(d.documentId)!.inserted).map((d) => d.documentId),
        removed,
      });
      await manager.query(`DELETE FROM kb_passages WHERE document_id = ANY($1::text[])`, [
        [...current.map((d) => d.documentId), ...removed],
      ]);
      const rows = current.flatMap((d) =>
        d.passages.map((p) => [d.documentId, p.index, d.revision, p.heading, p.content]),
      );
      for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
        const part = rows.slice(at, at + ROWS_PER_STATEMENT);
        const column = (k: number) => part.map((row) => row[k]);
        await manager.query(
          `INSERT INTO kb_passages (document_id, chunk_index, revision, title, heading, content)
           SELECT p.document_id, p.chunk_index, p.revision, d.title, p.heading, p.content
             FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[])
                  AS p(document_id, chunk_index, revision, heading, content)
             JOIN kb_documents d ON d.document_id = p.document_id`,
          [column(0), column(1), column(2), column(3), column(4)],
        );
      }
      // A trigger queues what a removed record may change (migrations/1763800210000-anchor-text.ts).
      await manager.query(`DELETE FROM kb_lexical_documents WHERE document_id = ANY($1::text[])`, [
        removed,
      ]);
      const written = current.map((d) => withStoredAnchor(d, kept.get(d.documentId)!));
      if (mirror) await mirror.mirror(manager, written, removed, await averagesOf(manager));
      return written;
    });
  }

  /** The matches' titles and passages, alive documents only, at most `limit`. */
  async results(
    matches: ReadonlyArray<{ documentId: string; score: number; passage: number }>,
    limit: number,
  ): Promise<LexicalHit[]> {
    const rows: Array<{
      document_id: string;
      title: string;
      heading: string;
      content: string;
      catching_up: boolean;
      ord: string;
    }> = await this.dataSource.query(...resultsStatement(matches));
    return rows.slice(0, limit).map((row) => ({
      documentId: row.document_id,
      title: row.title,
      heading: row.heading,
      content: row.content,
      score: matches[Number(row.ord) - 1].score,
      catchingUp: row.catching_up,
    }));
  }

  /**
   * For documents found outside this process's index (in Qdrant), the passage of each that
   * holds most of the query's terms, read from their records: each term votes for its best
   * passage with its BM25 share there and its weight (no idf: what the terms weigh in the
   * whole knowledge base is Qdrant's to know). A document without a record, or holding none
   * of the terms, shows its first passage.
   */
  async passagesFor(
    documentIds: readonly string[],
    terms: readonly WeightedTerm[],
  ): Promise<Map<string, number>> {
    const chosen = new Map<string, number>();
    if (documentIds.length === 0 || terms.length === 0) return chosen;
    const rows: Array<{
      document_id: string;
      terms: string;
      postings: Buffer;
      passage_lengths: number[];
      mean_passage: number | null;
    }> = await this.dataSource.query(
      `SELECT l.document_id, l.terms, l.postings, l.passage_lengths,
              (SELECT sum(passage_words)::float8 / nullif(sum(passages), 0)
                 FROM kb_lexical_stats) AS mean_passage
         FROM kb_lexical_documents l
        WHERE l.document_id = ANY($1::text[])`,
      [documentIds],
    );
    const weights = new Map(terms.map((t) => [t.term, t.weight]));
    for (const row of rows) {
      const count = row.postings.length / 8;
      // The query's terms in the record's order: each passage's votes summed as they were
      // when every term of the record was visited.
      const found: Array<{ index: number; weight: number }> = [];
      for (const [term, weight] of weights) {
        const index = termIndexOf(row.terms, term);
        if (index >= 0 && index < count) found.push({ index, weight });
      }
      found.sort((a, b) => a.index - b.index);
      const votes = new Map<number, number>();
      for (const { index, weight } of found) {
        const { fields, passage } = postingAt(row.postings, count, index);
        const packed = packPosting(fields, passage);
        const p = passageIndex(packed);
        const share = passageShare(
          passageCount(packed),
          row.passage_lengths[p] ?? 0,
          Math.max(row.mean_passage ?? 1, 1e-9),
        );
        votes.set(p, (votes.get(p) ?? 0) + weight * share);
      }
      let best = 0;
      let most = 0;
      for (const [p, vote] of votes) {
        if (vote > most || (vote === most && p < best)) [best, most] = [p, vote];
      }
      chosen.set(row.document_id, best);
    }
    return chosen;
  }

  /** The records' counts as kept by trigger (see {@link LexicalTotals}). */
  totals(): Promise<LexicalTotals> {
    return lexicalTotals((text) => this.dataSource.query(text));
  }

  /**
   * Every record under `prefix` ('' for all), {@link RECORD_PAGE} at a time in the order of
   * their ids, each page in a
   * transaction holding its rows (`FOR SHARE`: a writer of one of them waits) while `each`
   * runs, with the mean lengths then; how many records were visited.
   */
  async eachRecordPage(
    prefix: string,
    each: (
      manager: EntityManager,
      documents: readonly IndexedLexicalDocument[],
      averages: Bm25Averages,
    ) => Promise<void>,
  ): Promise<number> {
    let visited = 0;
    for (let after = ''; ;) {
      const rows = await this.dataSource.transaction(async (manager) => {
        const page: LexicalRow[] = await manager.query(
          `${SELECT_DOCUMENTS} WHERE document_id > $1 AND document_id LIKE $2
            ORDER BY document_id LIMIT ${RECORD_PAGE} FOR SHARE`,
          [after, `${escapeLike(prefix)}%`],
        );
        if (page.length > 0) await each(manager, page.map(documentOf), await averagesOf(manager));
        return page;
      });
      visited += rows.length;
      if (rows.length < RECORD_PAGE) return visited;
      after = rows[rows.length - 1].document_id;
    }
  }

  /**
   * How many documents of the same sample as {@link trainingSample}'s hold each term, counted
   * in PostgreSQL (a record's terms are distinct): a row per term, where the records' terms
   * themselves would bring every document's whole list into the server's heap.
   */
  termFrequencySample(limit: number): Promise<Array<{ term: string; df: number }>> {
    return this.dataSource.query(
      `SELECT term, count(*)::int AS df
         FROM (SELECT terms FROM kb_lexical_documents ORDER BY md5(document_id) LIMIT $1) s,
              unnest(string_to_array(s.terms, E'\\n')) AS term
        WHERE term <> ''
        GROUP BY term`,
      [limit],
    );
  }

  /** The records of at most `limit` documents, a sample fixed by the hashes of their ids. */
  async trainingSample(limit: number): Promise<TrainingDocument[]> {
    const rows: Array<{ terms: string; postings: Buffer }> = await this.dataSource.query(
      `SELECT terms, postings FROM kb_lexical_documents ORDER BY md5(document_id) LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({ terms: row.terms, postings: row.postings }));
  }
}

/** The sums of `kb_lexical_stats` (see its migration), as numbers. */
export interface LexicalTotals {
  readonly documents: number;
  readonly titleWords: number;
  readonly headingWords: number;
  readonly bodyWords: number;
  readonly passages: number;
  readonly passageWords: number;
  /** Words of the anchor fields. */
  readonly anchorWords: number;
  /** When the records last changed (ms since the epoch), 0 when never. */
  readonly changedAt: number;
}

/** The lexical records' counts as kept by trigger: one read of sixteen rows, no scan. */
export async function lexicalTotals(
  query: (text: string) => Promise<unknown[]>,
): Promise<LexicalTotals> {
  const [row] = (await query(
    `SELECT coalesce(sum(documents), 0)::float8 AS documents,
            coalesce(sum(title_words), 0)::float8 AS title_words,
            coalesce(sum(heading_words), 0)::float8 AS heading_words,
            coalesce(sum(body_words), 0)::float8 AS body_words,
            coalesce(sum(passages), 0)::float8 AS passages,
            coalesce(sum(passage_words), 0)::float8 AS passage_words,
            coalesce(sum(anchor_words), 0)::float8 AS anchor_words,
            coalesce(extract(epoch FROM max(changed_at)) * 1000, 0)::float8 AS changed_at
       FROM kb_lexical_stats`,
  )) as Array<Record<string, number>>;
  return {
    documents: row.documents,
    titleWords: row.title_words,
    headingWords: row.heading_words,
    bodyWords: row.body_words,
    passages: row.passages,
    passageWords: row.passage_words,
    anchorWords: row.anchor_words,
    changedAt: row.changed_at,
  };
}

/** The mean lengths BM25 normalises by, from the totals (1e-9 for a field nobody has). */
export function averagesOfTotals(totals: LexicalTotals): Bm25Averages {
  const n = Math.max(totals.documents, 1);
  const mean = (sum: number, count: number) => Math.max(sum / Math.max(count, 1), 1e-9);
  return {
    title: mean(totals.titleWords, n),
    headings: mean(totals.headingWords, n),
    body: mean(totals.bodyWords, n),
    anchor: mean(totals.anchorWords, n),
    passage: mean(totals.passageWords, totals.passages),
  };
}

export async function averagesOf(manager: EntityManager): Promise<Bm25Averages> {
  return averagesOfTotals(await lexicalTotals((text) => manager.query(text)));
}

/**
 * The title and passage of each match, in the matches' order, of alive documents only (one
 * may have been deleted since the index was read); `catching_up` when its current revision
 * waits to be embedded.
 */
export function resultsStatement(
  matches: ReadonlyArray<{ documentId: string; passage: number }>,
): [string, unknown[]] {
  return [
    `SELECT h.document_id, d.title, COALESCE(p.heading, '') AS heading,
            COALESCE(p.content, '') AS content,
            d.vector_status IN ('pending', 'error') AS catching_up, h.ord
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS h(document_id, chunk_index, ord)
       JOIN kb_documents d ON d.document_id = h.document_id AND d.deleted_at IS NULL
       LEFT JOIN kb_passages p ON p.document_id = h.document_id AND p.chunk_index = h.chunk_index
      ORDER BY h.ord`,
    [matches.map((m) => m.documentId), matches.map((m) => m.passage)],
  ];
}

/**
 * Queues what a write of lexical records may have changed of anchor fields (docs/search.md,
 * "Anchor text"): the written documents' own fields (`written`: a new title or id changes
 * which links name them); where the links of the written and removed documents point now, for
 * those that link or gave words to a field; and the links that may name a document that came
 * (`added`), went (`removed`: a document without a record, one skipped or emptied, is removed
 * again on each write) or was retitled (the title its passages, not yet replaced, hold), under
 * each title it has or had, since such a link may resolve to another document now. A removed
 * record's own consequences are queued by trigger.
 */
async function markAnchorsDue(
  manager: EntityManager,
  changes: {
    written: readonly string[];
    added: readonly string[];
    removed: readonly string[];
  },
): Promise<void> {
  const { written, added, removed } = changes;
  if (written.length === 0 && removed.length === 0) return;
  await manager.query(
    `WITH retitled AS (
       SELECT p.document_id AS id, p.title AS before, d.title AS now
         FROM kb_passages p JOIN kb_documents d USING (document_id)
        WHERE p.document_id = ANY($1::text[]) AND p.chunk_index = 0 AND d.title <> p.title),
     named AS (
       SELECT document_id AS id, title FROM kb_documents
        WHERE document_id = ANY($2::text[] || $3::text[])
       UNION
       SELECT id, before FROM retitled
       UNION
       SELECT id, now FROM retitled)
     INSERT INTO kb_anchors_due (document_id, kind, title)
     SELECT id, kind, title FROM (
       SELECT id, 'target' AS kind, '' AS title FROM unnest($1::text[]) AS id
       UNION
       SELECT id, 'source', '' FROM unnest($1::text[] || $3::text[]) AS id
        WHERE EXISTS (SELECT 1 FROM kb_links WHERE source_id = id)
       UNION
       -- One probe of the fields' sources for the whole write (a probe per document was a scan
       -- of the records each, on a table whose statistics lag a bulk load).
       SELECT source, 'source', '' FROM kb_lexical_documents, unnest(anchor_sources) AS source
        WHERE anchor_sources && ($1::text[] || $3::text[]) AND anchor_sources <> '{}'
          AND source = ANY($1::text[] || $3::text[])
       UNION
       SELECT id, 'name', title FROM named) AS due
     -- In one order, so two writers queueing the same rows never wait on each other in turn.
     ORDER BY id, kind, title
     ON CONFLICT (document_id, kind, title) DO UPDATE SET queued_at = clock_timestamp()`,
    [written, added, removed],
  );
}

/** A stored record as its upsert returned it: whether new, and the anchor field kept beside it. */
interface StoredRecord {
  readonly inserted: boolean;
  readonly anchor_terms: string;
  readonly anchor_counts: Buffer;
  readonly anchor_length: number;
  readonly anchor_stamp: number;
}

/** A write with the anchor field stored beside its record (the index outside reads it whole). */
function withStoredAnchor(document: LexicalWrite, stored: StoredRecord): LexicalWrite {
  if (stored.anchor_stamp === 0) return document;
  const record = withAnchorField(document.record, anchorFieldOfRow(stored));
  return { ...document, record, anchorStamp: stored.anchor_stamp };
}

/**
 * Upserts the documents' lexical records; an older revision never replaces a newer one, and
 * the record of the same revision under the same analyzer is kept as it is (the lexical pass
 * wrote it before the batch that embeds the document came to it).
 * The records stored: whether each is new (the document had none), and the anchor field kept
 * beside it (never written here: the anchor fields' job writes it).
 */
async function storeRecords(
  manager: EntityManager,
  unordered: readonly LexicalWrite[],
): Promise<Map<string, StoredRecord>> {
  if (unordered.length === 0) return new Map();
  // In one order (of ids), as the anchor fields' writer takes the same rows.
  const documents = [...unordered].sort((a, b) => (a.documentId < b.documentId ? -1 : 1));

  const stored: Array<StoredRecord & { document_id: string }> = await manager.query(
    `INSERT INTO kb_lexical_documents AS l
                (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings)
         SELECT r.document_id, r.revision, $3, r.tags::text[], ARRAY[r.lt, r.lh, r.lb],
                r.passage_lengths::int[], r.terms, r.postings
           FROM unnest($1::text[], $2::int[], $4::text[], $5::int[], $6::int[], $7::int[],
                       $8::text[], $9::text[], $10::bytea[])
                AS r(document_id, revision, tags, lt, lh, lb, passage_lengths, terms, postings)
           -- A document deleted since it was read gets no record back (its removal may have
           -- come first).
           JOIN kb_documents d ON d.document_id = r.document_id AND d.deleted_at IS NULL
         ON CONFLICT (document_id) DO UPDATE
            SET revision = EXCLUDED.revision, analyzer = EXCLUDED.analyzer, tags = EXCLUDED.tags,
                lengths = EXCLUDED.lengths, passage_lengths = EXCLUDED.passage_lengths,
                terms = EXCLUDED.terms, postings = EXCLUDED.postings
          WHERE l.revision < EXCLUDED.revision
             OR (l.revision = EXCLUDED.revision AND l.analyzer <> EXCLUDED.analyzer)
         RETURNING document_id, xmax = 0 AS inserted, anchor_terms, anchor_counts, anchor_length,
                   anchor_stamp`,
    [
      documents.map((d) => d.documentId),
      documents.map((d) => d.revision),
      ANALYZER_VERSION,
      documents.map((d) => arrayLiteral(d.tags.map(quoted))),
      documents.map((d) => d.record.lengths[0]),
      documents.map((d) => d.record.lengths[1]),
      documents.map((d) => d.record.lengths[2]),
      documents.map((d) => arrayLiteral(d.record.passageLengths.map(String))),
      documents.map((d) => joinTerms(d.record.terms)),
      documents.map((d) => encodePostings(d.record)),
    ],
  );
  return new Map(stored.map((row) => [row.document_id, row]));
}

function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

function arrayLiteral(items: readonly string[]): string {
  return `{${items.join(',')}}`;
}
