import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { prefixUpperBound } from '../../documents/document-id';

/** One document's passages, as the chunker cut them. */
export interface DocumentPassages {
  readonly documentId: string;
  readonly revision: number;
  readonly title: string;
  readonly passages: ReadonlyArray<{ index: number; heading: string; content: string }>;
}

export interface LexicalSearchOptions {
  readonly limit: number;
  /** A normalised folder ending in `/` (see folderOf). */
  readonly folder?: string;
  readonly tags?: readonly string[];
}

/** A document's best passage for a query, by full-text rank. */
export interface LexicalHit {
  readonly documentId: string;
  readonly title: string;
  readonly heading: string;
  readonly content: string;
  readonly rank: number;
  /** The document's current revision waits to be embedded (the vector side lacks it). */
  readonly catchingUp: boolean;
}

/** A word of a query: its lexeme and the tsquery (text form) that finds it. */
export interface QueryTerm {
  readonly lexeme: string;
  readonly tsquery: string;
}

export interface WeightedTerm extends QueryTerm {
  /** Passages holding it. */
  readonly df: number;
  readonly idf: number;
}

/** Document frequencies are counted up to this: beyond it a word is common, its weight near 0. */
const FREQUENCY_COUNT_MAX = 20_000;
/** How long document frequencies are kept, and how many. */
const FREQUENCY_CACHE_MS = 60_000;
const FREQUENCY_CACHE_ENTRIES = 10_000;
/** A word in more passages than this does not select candidates (its list is too long to score). */
const CANDIDATE_WORDS_MAX = 1000;
/** Passages looked at for one query, at most (one cheap rank each)... */
const CANDIDATES_MAX = 1000;
/** ...of which the best by that rank get the full score (one rank per word). */
const SCORED_MAX = 100;
/**
 * When every word of the query is common (above CANDIDATE_WORDS_MAX) the candidates are a
 * sample of this many passages of the rarest word, of which the best half (or `limit`, when
 * more) get the full score: such a query says little, and scoring more of the sample ranks
 * no better (its cost is one `ts_rank` per word and passage).
 */
const COMMON_CANDIDATES_MAX = 100;
/**
 * \`ts_rank\`'s weights of the classes D, C (body), B (headings), A (title), chosen on the
 * retrieval benchmark (bench/retrieval): a heavier title and headings (0.2 / 0.5 / 1)
 * ranked questions 25 % worse; adding a share of a document's other passages to its best
 * one made every kind worse.
 */
const RANK_WEIGHTS = '{0.1, 0.8, 0.9, 1.0}';

/** Rows per INSERT: a 1 MiB document of 1300 passages goes in three statements. */
const ROWS_PER_STATEMENT = 500;
/** Query terms looked up at most: a longer query adds cost, not precision. */
const MAX_TERMS = 32;

/**
 * The lexical side of search (docs/search.md): `kb_passages`, written by the vector worker when
 * it chunks a document, ranked in PostgreSQL. The weighted `tsvector` is a generated column
 * (title A, heading B, body C; `simple` and `english`), searched through its GIN index.
 */
@Injectable()
export class PassagesRepository {
  private readonly frequencies = new Map<string, { df: number; until: number }>();
  private total: { n: number; until: number } | undefined;
  private totalRead: Promise<number> | undefined;
  /** Counts being read now, by lexeme. */
  private readonly counting = new Map<string, Promise<number>>();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Makes these passages the documents' only ones, and removes those of `removed` (deleted
   * or skipped documents), in one transaction.
   */
  async replace(
    documents: readonly DocumentPassages[],
    removed: readonly string[] = [],
  ): Promise<void> {
    if (documents.length === 0 && removed.length === 0) return;
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM kb_passages WHERE document_id = ANY($1::text[])`, [
        [...documents.map((d) => d.documentId), ...removed],
      ]);
      const rows = documents.flatMap((d) =>
        d.passages.map((p) => [d.documentId, p.index, d.revision, d.title, p.heading, p.content]),
      );
      for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
        const part = rows.slice(at, at + ROWS_PER_STATEMENT);
        const column = (k: number) => part.map((row) => row[k]);
        await manager.query(
          `INSERT INTO kb_passages (document_id, chunk_index, revision, title, heading, content)
           SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[])`,
          [column(0), column(1), column(2), column(3), column(4), column(5)],
        );
      }
    });
  }

  /**
   * Best passage per alive document, best first, by a BM25-like score computed in
   * PostgreSQL: for each word of the query, its inverse document frequency over the
   * passages times `ts_rank` of the passage for that word (term frequency, title and
   * headings weighing more, normalised by length). The query's words are the lexemes of
   * both configurations (identifiers as written, English stems), without English stop
   * words; a passage must hold at least one of the rarer ones (the GIN index finds them).
   * Nothing in the query is parsed as tsquery syntax, so no input can make it fail.
   */
  async search(
    query: string,
    options: LexicalSearchOptions,
  ): Promise<{ hits: LexicalHit[]; lexemes: string[] }> {
    const terms = await this.terms(query);
    const lexemes = terms.map((t) => t.lexeme);
    if (terms.length === 0) return { hits: [], lexemes };
    const weighted = await this.weigh(terms);
    if (weighted.length === 0) return { hits: [], lexemes };
    const [text, values] = this.searchStatement(weighted, options);
    const rows: Array<{
      document_id: string;
      title: string;
      heading: string;
      content: string;
      rank: number;
      catching_up: boolean;
    }> = await this.dataSource.query(text, values);
    return {
      hits: rows.map((row) => ({
        documentId: row.document_id,
        title: row.title,
        heading: row.heading,
        content: row.content,
        rank: row.rank,
        catchingUp: row.catching_up,
      })),
      lexemes,
    };
  }

  /**
   * The words of a query as lexemes, each with its tsquery (text form, written by
   * PostgreSQL): those of `simple` that are not English stop words, and the English stems;
   * the longest first, at most {@link MAX_TERMS}.
   */
  async terms(query: string): Promise<QueryTerm[]> {
    return this.dataSource.query(
      `WITH words AS (
         SELECT DISTINCT lexeme FROM unnest(to_tsvector('simple', kb_search_words($1))) AS s
          WHERE to_tsvector('english', lexeme) <> ''::tsvector
         UNION
         SELECT lexeme FROM unnest(to_tsvector('english', kb_search_words($1))))
       SELECT lexeme, q.tsquery
         FROM words, LATERAL (SELECT plainto_tsquery('simple', lexeme)::text AS tsquery) q
        WHERE q.tsquery <> ''
        ORDER BY length(lexeme) DESC, lexeme
        LIMIT ${MAX_TERMS}`,
      [query],
    );
  }

  /**
   * Inverse document frequencies of the terms, over passages, BM25's
   * `ln(1 + (N − df + 0.5) / (df + 0.5))`; terms no passage holds are dropped. Counts are
   * kept a minute: they move slowly, and a common word costs a scan of its posting list.
   */
  async weigh(terms: readonly QueryTerm[]): Promise<WeightedTerm[]> {
    const now = Date.now();
    // Searches that find a count missing at the same moment share one query for it.
    const stale = terms.filter(
      (t) => (this.frequencies.get(t.lexeme)?.until ?? 0) < now && !this.counting.has(t.lexeme),
    );
    if (stale.length > 0) this.countFrequencies(stale, now);
    const [total, dfs] = await Promise.all([
      this.passageCount(now),
      Promise.all(
        terms.map((t) => this.counting.get(t.lexeme) ?? this.frequencies.get(t.lexeme)?.df ?? 0),
      ),
    ]);
    const n = Math.max(total, 1);
    return terms.flatMap((term, i) => {
      const df = dfs[i];
      return df === 0 ? [] : [{ ...term, df, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) }];
    });
  }

  /** Passages in all, read again once a minute (one query for the searches that need it). */
  private passageCount(now: number): Promise<number> | number {
    if (this.total !== undefined && this.total.until >= now) return this.total.n;
    this.totalRead ??= this.dataSource
      .query(`SELECT count(*)::int AS n FROM kb_passages`)
      .then(([row]: Array<{ n: number }>) => {
        this.total = { n: row.n, until: now + FREQUENCY_CACHE_MS };
        return row.n;
      })
      .finally(() => (this.totalRead = undefined));
    return this.totalRead;
  }

  /** Counts the passages of each term (capped), caches the counts, and shares them meanwhile. */
  private countFrequencies(terms: readonly QueryTerm[], now: number): void {
    const read: Promise<number[]> = this.dataSource
      .query(
        `SELECT t.q AS tsquery,
                (SELECT count(*)::int FROM (SELECT FROM kb_passages WHERE search @@ t.q::tsquery
                                             LIMIT ${FREQUENCY_COUNT_MAX}) x) AS df
           FROM unnest($1::text[]) AS t(q)`,
        [terms.map((t) => t.tsquery)],
      )
      .then((rows: Array<{ tsquery: string; df: number }>) =>
        rows.map((row, i) => {
          // A word no passage holds yet is asked again next time: it may be written any moment.
          if (row.df === 0) {
            this.frequencies.delete(terms[i].lexeme);
            return 0;
          }
          if (this.frequencies.size >= FREQUENCY_CACHE_ENTRIES) {
            this.frequencies.delete(this.frequencies.keys().next().value!);
          }
          this.frequencies.set(terms[i].lexeme, { df: row.df, until: now + FREQUENCY_CACHE_MS });
          return row.df;
        }),
      );
    terms.forEach((t, i) =>
      this.counting.set(
        t.lexeme,
        read.then((dfs) => dfs[i]),
      ),
    );
    const done = () => terms.forEach((t) => this.counting.delete(t.lexeme));
    read.then(done, done);
  }

  /**
   * The search statement for weighted terms, for EXPLAIN in tests. The work is bounded
   * whatever the words: candidates are the passages holding one of the words found in at
   * most {@link CANDIDATE_WORDS_MAX} passages (all of them: the ranking is then exact), or,
   * when every word is more common than that, those of the rarest word. At most
   * {@link CANDIDATES_MAX} of them are ranked by `ts_rank` for all those words at once, and
   * the best {@link SCORED_MAX} get the full score, word by word ({@link COMMON_CANDIDATES_MAX}
   * and half of them in the second case).
   */
  searchStatement(
    terms: readonly WeightedTerm[],
    options: LexicalSearchOptions,
  ): [string, unknown[]] {
    const rare = terms.filter((t) => t.df <= CANDIDATE_WORDS_MAX);
    const selective = rare.length > 0 ? rare : [terms.reduce((a, b) => (b.df < a.df ? b : a))];
    // Only common words: an unselective query, answered from a small sample of its best.
    const candidates = rare.length > 0 ? CANDIDATES_MAX : COMMON_CANDIDATES_MAX;
    const scored =
      rare.length > 0
        ? SCORED_MAX
        : Math.min(COMMON_CANDIDATES_MAX, Math.max(COMMON_CANDIDATES_MAX / 2, options.limit));
    const folder = options.folder ?? null;
    // Only keys travel through the ranking; title and passage are read for the answer's
    // rows alone (a passage and its tsvector are kilobytes each).
    return [
      `WITH candidates AS (
         SELECT c.document_id, c.chunk_index, c.search
           FROM kb_passages c
          WHERE c.search @@ $1::tsquery
            AND ($2::text IS NULL OR (c.document_id >= $2 AND c.document_id < $3))
          LIMIT ${candidates}),
       scored AS (
         SELECT p.document_id, p.chunk_index,
                (SELECT sum(w.idf * ts_rank('${RANK_WEIGHTS}', p.search, w.q, 1))
                   FROM unnest($6::tsquery[], $7::float8[]) AS w(q, idf))::float8 AS rank
           FROM (SELECT * FROM candidates
                  ORDER BY ts_rank('${RANK_WEIGHTS}', search, $1::tsquery, 1) DESC
                  LIMIT ${scored}) p),
       best AS (
         SELECT DISTINCT ON (s.document_id) s.document_id, s.chunk_index, s.rank, d.title,
                d.vector_status IN ('pending', 'error') AS catching_up
           FROM scored s JOIN kb_documents d ON d.document_id = s.document_id
          WHERE d.deleted_at IS NULL AND ($4::text[] IS NULL OR d.tags @> $4::text[])
          ORDER BY s.document_id, s.rank DESC)
       SELECT b.document_id, b.title, p.heading, p.content, b.rank, b.catching_up
         FROM (SELECT * FROM best ORDER BY rank DESC, document_id LIMIT $5) b
         JOIN kb_passages p ON p.document_id = b.document_id AND p.chunk_index = b.chunk_index
        ORDER BY b.rank DESC, b.document_id`,
      [
        anyOf(selective),
        folder,
        folder === null ? null : prefixUpperBound(folder),
        options.tags && options.tags.length > 0 ? options.tags : null,
        options.limit,
        terms.map((t) => t.tsquery),
        terms.map((t) => t.idf),
      ],
    ];
  }
}

/** The OR of some terms, as tsquery text. */
function anyOf(terms: readonly QueryTerm[]): string {
  return terms.map((t) => `(${t.tsquery})`).join(' | ');
}
