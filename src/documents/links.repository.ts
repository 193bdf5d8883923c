import { Injectable } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { readableIds, type Readable } from './access';
import type { LinkRow } from './links/link-row';

/** A document as links show it: its id and title. */
export interface LinkedDocument {
  readonly document_id: string;
  readonly title: string;
}

/** A document whose links are read: its body too. */
export interface LinkingDocument extends LinkedDocument {
  readonly body: string;
}

/** One look in an index of names or titles: `key`, ids in `[lo, hi)` (`hi` null: to the end). */
export interface RangeProbe {
  readonly key: string;
  readonly lo: string;
  readonly hi: string | null;
}

/**
 * The condition finding the link rows holding one of the keys `$1` in the GIN index, which
 * holds the keys' 64-bit hashes (migrations/1763800250000-link-key-hashes.ts).
 */
const HOLDS_A_KEY = 'kb_link_key_hashes(keys) && kb_link_key_hashes($1::text[])';

/** The condition on `source_id` keeping the links of documents the caller may read. */
function readableSources(n: number): string {
  return `($${n}::text[] IS NULL OR source_id LIKE ANY($${n}::text[]))`;
}

/**
 * The SQL of links between documents (migrations/1763800200000-links.ts): the link rows, the
 * documents links may name (by id, by name, by title), the documents that link to others, and
 * the queue of bodies whose links are still to be read. Every read takes the caller's
 * readable folders (`readable`, see access.ts) into the query.
 */
@Injectable()
export class LinksRepository {
  constructor(private readonly statements: PreparedStatements) {}

  /** The alive documents among `ids` the caller may read. */
  async alive(ids: readonly string[], readable: Readable): Promise<LinkedDocument[]> {
    if (ids.length === 0) return [];
    return this.statements.query<LinkedDocument>(
      'kb_links_alive',
      `SELECT document_id, title FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL AND ${readableIds(2)}`,
      [ids, readable],
    );
  }

  /**
   * The alive documents the caller may read among `ids`, and those of each of `names` and
   * `titles` (in all folders), in one statement: `by` says which (`id`, `name`, `title`) and
   * `key` which of them.
   */
  async candidates(
    lookup: { ids: readonly string[]; names: readonly string[]; titles: readonly string[] },
    readable: Readable,
  ): Promise<Array<{ by: 'id' | 'name' | 'title'; key: string; document_id: string }>> {
    return this.statements.query(
      'kb_links_candidates',
      `SELECT 'id' AS by, document_id AS key, document_id FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL AND ${readableIds(4)}
       UNION ALL
       SELECT 'name', kb_document_name(document_id), document_id FROM kb_documents
        WHERE kb_document_name(document_id) = ANY($2::text[]) AND deleted_at IS NULL
          AND ${readableIds(4)}
       UNION ALL
       SELECT 'title', kb_title_key(title), document_id FROM kb_documents
        WHERE kb_title_key(title) = ANY($3::text[]) AND deleted_at IS NULL AND ${readableIds(4)}`,
      [lookup.ids, lookup.names, lookup.titles, readable],
    );
  }

  /**
   * The alive documents of `lookup`'s ids, names and titles whose folder is the top or one of
   * `folders` (parent ids): the namesakes a document in the deepest of them may take a link
   * over from, or hand it back to. Asked in the database, not filtered after: a title many
   * documents share would bring them all.
   */
  async namesakesIn(
    lookup: { ids: readonly string[]; names: readonly string[]; titles: readonly string[] },
    folders: readonly string[],
  ): Promise<string[]> {
    const rows: Array<{ document_id: string }> = await this.statements.query(
      'kb_links_namesakes_in',
      `SELECT document_id FROM kb_documents
        WHERE (document_id = ANY($1::text[]) OR kb_document_name(document_id) = ANY($2::text[])
               OR kb_title_key(title) = ANY($3::text[]))
          AND deleted_at IS NULL AND (parent_id IS NULL OR parent_id = ANY($4::text[]))`,
      [lookup.ids, lookup.names, lookup.titles, folders],
    );
    return rows.map((row) => row.document_id);
  }

  /**
   * The alive document `documentId` if the caller may read it (`by: 'self'`, its title as
   * `key`), and in the same statement the documents its backlinks may be confused with: its
   * twin with or without `.md` (`id`), those of its name and of the name of its title
   * (`name`), those of its title (`title`). A backlinks page starts with this one round trip.
   */
  async candidatesOf(
    documentId: string,
    twin: string,
    name: string,
    readable: Readable,
  ): Promise<Array<{ by: 'self' | 'id' | 'name' | 'title'; key: string; document_id: string }>> {
    return this.statements.query(
      'kb_links_candidates_of',
      `WITH d AS (
         SELECT document_id, title, kb_title_key(title) AS t FROM kb_documents
          WHERE document_id = $1 AND deleted_at IS NULL AND ${readableIds(4)})
       SELECT 'self' AS by, title AS key, document_id FROM d
       UNION ALL
       SELECT 'id', document_id, document_id FROM kb_documents
        WHERE document_id = $2 AND deleted_at IS NULL AND ${readableIds(4)}
          AND EXISTS (SELECT 1 FROM d)
       UNION ALL
       SELECT 'name', kb_document_name(document_id), document_id FROM kb_documents
        WHERE kb_document_name(document_id) = ANY(ARRAY[$3, (SELECT kb_document_name(t) FROM d)])
          AND deleted_at IS NULL AND ${readableIds(4)} AND EXISTS (SELECT 1 FROM d)
       UNION ALL
       SELECT 'title', kb_title_key(title), document_id FROM kb_documents
        WHERE kb_title_key(title) = (SELECT t FROM d) AND deleted_at IS NULL
          AND ${readableIds(4)}`,
      [documentId, twin, name, readable],
    );
  }

  /**
   * For each probe (its place in `probes` as `i`, from 0), the alive documents the caller may
   * read whose name (the last segment of the id, folded, without `.md`) is its key, in its
   * range of ids: one range of the index `kb_documents_alive_name` each. (`OFFSET 0` keeps
   * the lookup a loop over the probes: flattened into a join, the generic plan hashed every
   * document's name, 2.8 s at 300 000 documents.)
   */
  async named(
    probes: readonly RangeProbe[],
    readable: Readable,
  ): Promise<Array<LinkedDocument & { i: number }>> {
    return this.inKeyRanges('kb_links_named', 'kb_document_name(document_id)', probes, readable);
  }

  /** {@link named}, by title (titleKey) in `kb_documents_alive_title`. */
  async titled(
    probes: readonly RangeProbe[],
    readable: Readable,
  ): Promise<Array<LinkedDocument & { i: number }>> {
    return this.inKeyRanges('kb_links_titled', 'kb_title_key(title)', probes, readable);
  }

  /** The documents whose `key` (an indexed expression) is a probe's, in its range of ids. */
  private async inKeyRanges(
    statement: string,
    key: string,
    probes: readonly RangeProbe[],
    readable: Readable,
  ): Promise<Array<LinkedDocument & { i: number }>> {
    if (probes.length === 0) return [];
    return this.statements.query(
      statement,
      `SELECT p.i::integer - 1 AS i, d.document_id, d.title
         FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS p(key, lo, hi, i)
         CROSS JOIN LATERAL (
           SELECT document_id, title FROM kb_documents
            WHERE ${key} = p.key AND deleted_at IS NULL
              AND document_id >= p.lo COLLATE "C"
              AND (p.hi IS NULL OR document_id < p.hi COLLATE "C")
              AND ${readableIds(4)}
           OFFSET 0) AS d`,
      [...columns(probes), readable],
    );
  }

  /**
   * The alive documents the caller may read (but `except`) whose links hold one of `keys`,
   * after `after` in byte order of id, the first `limit`, and how many there are in all. The
   * matches are collected whole from the GIN index first (a materialised CTE), then counted
   * and sorted: walking the ids in order and testing each would read every linking document
   * for a rare key.
   */
  async linkingPage(
    keys: readonly string[],
    except: string,
    after: string | null,
    limit: number,
    readable: Readable,
  ): Promise<{ ids: string[]; count: number }> {
    const [row] = await this.statements.query<{ ids: string[]; count: string }>(
      'kb_links_linking_page',
      `WITH linking AS MATERIALIZED (
         SELECT source_id FROM kb_links
          WHERE ${HOLDS_A_KEY} AND alive AND source_id <> $2 AND ${readableSources(5)})
       SELECT ARRAY(SELECT source_id FROM linking
                     WHERE $3::text IS NULL OR source_id > $3::text COLLATE "C"
                     ORDER BY source_id COLLATE "C"
                     LIMIT $4) AS ids,
              (SELECT count(*) FROM linking) AS count`,
      [keys, except, after, limit, readable],
    );
    return { ids: row.ids, count: Number(row.count) };
  }

  /**
   * Whether any alive readable document (but `except`) has a link holding one of `keys`: one
   * probe of the GIN index, before anything dearer is asked about a document's backlinks.
   */
  async anyLinking(keys: readonly string[], except: string, readable: Readable): Promise<boolean> {
    const [row] = await this.statements.query<{ any: boolean }>(
      'kb_links_any_linking',
      `SELECT EXISTS (
         SELECT 1 FROM kb_links
          WHERE ${HOLDS_A_KEY} AND alive AND source_id <> $2 AND ${readableSources(3)}) AS any`,
      [keys, except, readable],
    );
    return row.any;
  }

  /**
   * Every alive readable document (but `except`) whose links hold one of `keys`, in byte order
   * of id, with the ones of `keys` it holds: for keys whose links resolve to a document only
   * from some documents (link-resolution.ts, `nearest`).
   */
  async linkingWithKeys(
    keys: readonly string[],
    except: string,
    readable: Readable,
  ): Promise<Array<{ source_id: string; matched: string[] }>> {
    return this.statements.query(
      'kb_links_linking_with_keys',
      `SELECT source_id,
              ARRAY(SELECT DISTINCT k FROM unnest(keys) AS k WHERE k = ANY($1::text[])) AS matched
         FROM kb_links
        WHERE ${HOLDS_A_KEY} AND alive AND source_id <> $2 AND ${readableSources(3)}
        ORDER BY source_id COLLATE "C"`,
      [keys, except, readable],
    );
  }

  /**
   * Which of `keys` the links of some alive document (anywhere) hold: one probe of the GIN
   * index for many documents at once, before anything dearer is asked about their backlinks.
   */
  async heldKeys(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.statements.query<{ key: string }>(
      'kb_links_held_keys',
      `SELECT DISTINCT k AS key
         FROM kb_links, unnest(keys) AS k
        WHERE ${HOLDS_A_KEY} AND alive AND k = ANY($1::text[])`,
      [keys],
    );
    return new Set(rows.map((row) => row.key));
  }

  /**
   * The link rows of the alive readable documents (but `except`) holding one of `keys`, whole
   * (every key and text): what the links to a document call it (its anchor texts) are read
   * from them, in one indexed query.
   */
  async linkingRows(
    keys: readonly string[],
    except: string,
    readable: Readable,
  ): Promise<Array<{ source_id: string; keys: string[]; labels: string[] }>> {
    return this.statements.query(
      'kb_links_linking_rows',
      `SELECT source_id, keys, labels FROM kb_links
        WHERE ${HOLDS_A_KEY} AND alive AND source_id <> $2 AND ${readableSources(3)}`,
      [keys, except, readable],
    );
  }

  /** The alive documents among `ids` the caller may read, with their bodies. */
  async bodies(ids: readonly string[], readable: Readable): Promise<LinkingDocument[]> {
    if (ids.length === 0) return [];
    return this.statements.query<LinkingDocument>(
      'kb_links_bodies',
      `SELECT document_id, title, body FROM kb_documents
        WHERE document_id = ANY($1::text[]) AND deleted_at IS NULL AND ${readableIds(2)}`,
      [ids, readable],
    );
  }

  /**
   * Alive readable documents with links, ids in `[lo, hi)` and after `after`, in byte order,
   * the first `limit`, with their bodies: the broken links of a folder are read a page of
   * documents at a time.
   */
  async linkingUnder(
    lo: string,
    hi: string | null,
    after: string | null,
    limit: number,
    readable: Readable,
  ): Promise<LinkingDocument[]> {
    return this.statements.query<LinkingDocument>(
      'kb_links_linking_under',
      `SELECT d.document_id, d.title, d.body
         FROM kb_links l JOIN kb_documents d ON d.document_id = l.source_id
        WHERE l.alive AND l.source_id >= $1::text COLLATE "C"
          AND ($2::text IS NULL OR l.source_id < $2::text COLLATE "C")
          AND ($3::text IS NULL OR l.source_id > $3::text COLLATE "C")
          AND ${readableSources(5)}
        ORDER BY l.source_id COLLATE "C"
        LIMIT $4`,
      [lo, hi, after, limit, readable],
    );
  }

  /**
   * Takes up to `limit` documents queued for their links to be read (kb_links_pending), with
   * their bodies, locking them until the transaction this runs in ends: a write of one of them
   * waits, then finds the row this writes (link rows are written under the document's lock).
   * Rows another process holds are skipped.
   */
  async claimPending(
    limit: number,
  ): Promise<Array<{ document_id: string; body: string; deleted: boolean }>> {
    return this.statements.query(
      'kb_links_claim_pending',
      `SELECT d.document_id, d.body, d.deleted_at IS NOT NULL AS deleted
         FROM kb_links_pending p JOIN kb_documents d ON d.document_id = p.document_id
        ORDER BY p.document_id
        LIMIT $1
          FOR UPDATE OF p, d SKIP LOCKED`,
      [limit],
    );
  }

  /** Writes the link rows of claimed documents and takes them off the queue. */
  async writeClaimed(
    rows: ReadonlyArray<{ document_id: string; deleted: boolean; links: LinkRow | null }>,
  ): Promise<void> {
    const linked = rows.filter((row) => row.links !== null);
    await this.statements.query(
      'kb_links_write_claimed',
      `WITH written AS (
         INSERT INTO kb_links (source_id, alive, keys, labels)
         SELECT r.source_id, r.alive, string_to_array(r.keys, E'\\x1f'), string_to_array(r.labels, E'\\x1f')
           FROM unnest($1::text[], $2::boolean[], $3::text[], $4::text[]) AS r(source_id, alive, keys, labels)
         ON CONFLICT (source_id) DO UPDATE
           SET alive = EXCLUDED.alive, keys = EXCLUDED.keys, labels = EXCLUDED.labels),
       unlinked AS (
         DELETE FROM kb_links WHERE source_id = ANY($5::text[])),
       -- Where the links read point is read again for the anchor fields (docs/search.md).
       due AS (
         INSERT INTO kb_anchors_due (document_id, kind)
         SELECT DISTINCT id, 'source' FROM unnest($6::text[]) AS id ORDER BY id
         ON CONFLICT (document_id, kind, title) DO UPDATE SET queued_at = clock_timestamp())
       DELETE FROM kb_links_pending WHERE document_id = ANY($6::text[])`,
      [
        linked.map((row) => row.document_id),
        linked.map((row) => !row.deleted),
        linked.map((row) => row.links!.keys),
        linked.map((row) => row.links!.labels),
        rows.filter((row) => row.links === null).map((row) => row.document_id),
        rows.map((row) => row.document_id),
      ],
    );
  }

  /** How many documents wait for their links to be read. */
  async pendingCount(): Promise<number> {
    const [row] = await this.statements.query<{ count: string }>(
      'kb_links_pending_count',
      `SELECT count(*) FROM kb_links_pending`,
      [],
    );
    return Number(row.count);
  }
}

function columns(probes: readonly RangeProbe[]): [string[], string[], Array<string | null>] {
  return [probes.map((p) => p.key), probes.map((p) => p.lo), probes.map((p) => p.hi)];
}
