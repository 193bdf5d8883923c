import { Injectable } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { prefixUpperBound } from './document-id';
import type { DocumentPageRow, DocumentSummaryRow } from './documents.repository';

/** The columns of a listing's item. */
const LIST_COLUMNS = [
  'document_id',
  'parent_id',
  'title',
  'tags',
  'revision',
  'updated_at',
  'vector_status',
];

/**
 * The document listings: pages by offset and by keyset, and the ids and folders that
 * complete a prefix. Each is an index range scan in byte order of id over the alive
 * documents, reading no more rows than it returns, with no condition beside the range: what
 * an access policy allows is given as ranges (DocumentListingsService). Tests EXPLAIN each
 * statement over 300 000 rows (test/read-plans.e2e-spec.ts), in the plans PostgreSQL may
 * choose for a named prepared statement.
 */
@Injectable()
export class DocumentListingsRepository {
  constructor(private readonly statements: PreparedStatements) {}

  /**
   * One page of alive documents in byte order of id, starting with `prefix`. Reads at most
   * `limit + 1` rows (the extra one only tells whether more follow) through the partial
   * index `kb_documents_alive_id`.
   */
  async list(prefix: string, limit: number, offset: number): Promise<DocumentSummaryRow[]> {
    const [text, values, name] = this.listStatement(prefix, limit, offset);
    return this.statements.query<DocumentSummaryRow>(name, text, values);
  }

  /** The exact query and parameters {@link list} runs, for EXPLAIN in tests. */
  listQueryForExplain(prefix: string, limit: number, offset: number): [string, unknown[]] {
    const [text, values] = this.listStatement(prefix, limit, offset);
    return [text, values];
  }

  private listStatement(
    prefix: string,
    limit: number,
    offset: number,
  ): [string, unknown[], string] {
    const upper = prefix === '' ? undefined : prefixUpperBound(prefix);
    // The byte range alone selects exactly the ids starting with the prefix, and nothing may
    // repeat it: the planner multiplies the selectivities of the conditions it is given, so a
    // `LIKE 'prefix%'` beside the range made a folder of 6 000 look like 61 rows, and a sort
    // of the whole folder cheaper than reading the first page of the index in order. (A
    // prefix of U+10FFFF only has no upper bound: every id from it on starts with it.)
    const [range, values, name] =
      upper === undefined
        ? ['', [], 'kb_documents_list']
        : upper === null
          ? ['AND document_id >= $1', [prefix], 'kb_documents_list_open_prefix']
          : [
              'AND document_id >= $1 AND document_id < $2',
              [prefix, upper],
              'kb_documents_list_prefix',
            ];
    const n = values.length;
    if (offset === 0) {
      return [
        `SELECT ${LIST_COLUMNS.join(', ')} FROM kb_documents
          WHERE deleted_at IS NULL ${range}
          ORDER BY document_id
          LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...values, limit + 1, offset],
        name,
      ];
    }
    // A deeper page skips its offset in the index alone (an index-only scan of the alive ids),
    // then reads the rows of the page: the rows skipped are never fetched from the table, which
    // at a million documents made an offset of 500 cost 550 random heap reads. The lateral
    // lookup (its LIMIT keeps the planner from turning it into a join) is one index probe a
    // row, whatever the planner guesses of a generic plan's limit.
    return [
      `SELECT ${LIST_COLUMNS.map((column) => `d.${column}`).join(', ')}
         FROM (SELECT document_id FROM kb_documents
                WHERE deleted_at IS NULL ${range}
                ORDER BY document_id
                LIMIT $${n + 1} OFFSET $${n + 2}) AS page
         CROSS JOIN LATERAL (SELECT ${LIST_COLUMNS.join(', ')} FROM kb_documents
                              WHERE document_id = page.document_id LIMIT 1) AS d
        ORDER BY page.document_id`,
      [...values, limit + 1, offset],
      `${name}_offset`,
    ];
  }

  /**
   * Up to `limit` alive documents with an id above `after` (from the start when `null`) and
   * starting with `range` ('' for all), in byte order: a keyset page, so a deep page costs
   * what the first one does. Reads the index range and the rows returned, never the table.
   */
  async pageAfter(after: string | null, range: string, limit: number): Promise<DocumentPageRow[]> {
    const [text, values, name] = this.pageStatement(after, range, limit);
    return this.statements.query<DocumentPageRow>(name, text, values);
  }

  /** The exact query and parameters {@link pageAfter} runs, for EXPLAIN in tests. */
  pageQueryForExplain(after: string | null, range: string, limit: number): [string, unknown[]] {
    const [text, values] = this.pageStatement(after, range, limit);
    return [text, values];
  }

  private pageStatement(
    after: string | null,
    range: string,
    limit: number,
  ): [string, unknown[], string] {
    // octet_length reads the stored length of a TOASTed body, not the body itself. The time
    // comes as the ISO 8601 text the API shows (what Date#toISOString gives), not as a
    // timestamp for the driver to parse into a Date and the service to format again.
    const columns = `document_id, title, revision,
      to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
      octet_length(body) AS size`;
    const upper = range === '' ? null : prefixUpperBound(range);
    // One lower bound, the higher of the two: two of them would be estimated as independent.
    const from =
      after !== null && Buffer.compare(Buffer.from(after), Buffer.from(range)) >= 0
        ? { condition: 'document_id > $1', value: after }
        : range === ''
          ? undefined
          : { condition: 'document_id >= $1', value: range };
    if (from === undefined) {
      return [
        `SELECT ${columns} FROM kb_documents
          WHERE deleted_at IS NULL ORDER BY document_id LIMIT $1`,
        [limit],
        'kb_documents_page_first',
      ];
    }
    if (upper === null) {
      return [
        `SELECT ${columns} FROM kb_documents
          WHERE deleted_at IS NULL AND ${from.condition}
          ORDER BY document_id LIMIT $2`,
        [from.value, limit],
        from.condition.includes('>=') ? 'kb_documents_page_from' : 'kb_documents_page_after',
      ];
    }
    return [
      `SELECT ${columns} FROM kb_documents
        WHERE deleted_at IS NULL AND ${from.condition} AND document_id < $2
        ORDER BY document_id LIMIT $3`,
      [from.value, upper, limit],
      from.condition.includes('>=') ? 'kb_documents_page_range' : 'kb_documents_page_after_in',
    ];
  }

  /**
   * Up to `limit` alive ids starting with `prefix`, in byte order: a range of the id index,
   * reading no more entries than it returns.
   */
  async idsWithPrefix(prefix: string, limit: number): Promise<string[]> {
    const [text, values, name] = this.idsStatement(prefix, limit);
    const rows = await this.statements.query<{ document_id: string }>(name, text, values);
    return rows.map((row) => row.document_id);
  }

  idsQueryForExplain(prefix: string, limit: number): [string, unknown[]] {
    const [text, values] = this.idsStatement(prefix, limit);
    return [text, values];
  }

  private idsStatement(prefix: string, limit: number): [string, unknown[], string] {
    const upper = prefixUpperBound(prefix);
    if (upper === null) {
      return [
        `SELECT document_id FROM kb_documents
          WHERE deleted_at IS NULL AND document_id >= $1
          ORDER BY document_id LIMIT $2`,
        [prefix, limit],
        'kb_documents_ids_from',
      ];
    }
    return [
      `SELECT document_id FROM kb_documents
        WHERE deleted_at IS NULL AND document_id >= $1 AND document_id < $2
        ORDER BY document_id LIMIT $3`,
      [prefix, upper, limit],
      'kb_documents_ids_range',
    ];
  }

  /**
   * Up to `limit` distinct folders that extend `prefix` by at most one segment, in byte
   * order of `folder/`: for `prefix` "kb/re" and documents under kb/reports/2024/ and
   * kb/research/, the folders "kb/reports" and "kb/research". A skip scan over the index of
   * alive folders (`parent_id || '/'`): every key of a folder's subtree starts with
   * `folder/`, so the next folder is the first key from `folder0` on ("0" follows "/").
   * One index probe per folder returned, however many documents a folder holds.
   */
  async foldersWithPrefix(prefix: string, limit: number): Promise<string[]> {
    const [text, values, name] = this.foldersStatement(prefix, limit);
    const rows = await this.statements.query<{ folder: string }>(name, text, values);
    return rows.map((row) => row.folder);
  }

  foldersQueryForExplain(prefix: string, limit: number): [string, unknown[]] {
    const [text, values] = this.foldersStatement(prefix, limit);
    return [text, values];
  }

  private foldersStatement(prefix: string, limit: number): [string, unknown[], string] {
    const upper = prefixUpperBound(prefix);
    // The folder key k = parent_id || '/' cut after the first "/" that follows $1, "/" dropped.
    // Keys start strictly above $1: the key equal to "docs/" is the folder docs itself, which
    // does not extend the value "docs/".
    const folderOf = `left(k, char_length($1::text) + strpos(substr(k, char_length($1::text) + 1), '/') - 1)`;
    const below = upper === null ? '' : `AND parent_id || '/' < $2::text`;
    const limitParam = upper === null ? '$2' : '$3';
    const next = (from: string) =>
      `(SELECT ${folderOf} FROM (SELECT parent_id || '/' AS k FROM kb_documents
          WHERE deleted_at IS NULL AND parent_id || '/' ${from} ${below}
          ORDER BY parent_id || '/' LIMIT 1) first)`;
    return [
      `WITH RECURSIVE walk(folder, n) AS (
         SELECT ${next('> $1::text')}, 1
         UNION ALL
         SELECT ${next(`>= walk.folder || '0'`)}, walk.n + 1
           FROM walk WHERE walk.folder IS NOT NULL AND walk.n < ${limitParam}::int
       )
       SELECT folder FROM walk WHERE folder IS NOT NULL`,
      upper === null ? [prefix, limit] : [prefix, upper, limit],
      upper === null ? 'kb_documents_folders_from' : 'kb_documents_folders_range',
    ];
  }
}
