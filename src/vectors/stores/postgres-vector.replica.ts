import { Logger } from '@nestjs/common';
import { setImmediate } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import {
  changesSince,
  ChangeLog,
  logHead,
  LogPosition,
  pruneLog,
  SharedRefresh,
} from '../../database/change-log';
import { ChunkIndex, IndexedChunk, IndexedDocument, IndexFilter, IndexHit } from './chunk-index';
import { ancestorsOf, decodeVector } from './vector-payload';
import { DocumentPoints } from './vector-store.interface';

/** Change-log rows older than this are pruned; a server further behind reloads everything. */
const CHANGE_RETENTION_MS = 60 * 60 * 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** Catch up in the background too, so an idle server never falls far behind. */
const BACKGROUND_REFRESH_MS = 30 * 1000;
/**
 * How stale the index may be for writes made by other servers: a search reads the change
 * log only if the last read started longer ago than this. This server's own writes are
 * applied as soon as they commit, so they are searchable at once.
 */
const REFRESH_INTERVAL_MS = 100;
const LOAD_PAGE_ROWS = 1000;

const SELECT_CHUNKS = `SELECT document_id, chunk_index, revision, tags, ancestors, embedding
                         FROM kb_chunk_vectors`;

interface ChunkRow {
  document_id: string;
  chunk_index: number;
  revision: number;
  tags: string[];
  ancestors: string[];
  embedding: Buffer;
}

const CHANGE_LOG: ChangeLog = { log: 'kb_chunk_vector_changes', meta: 'kb_chunk_vector_meta' };

/**
 * This server's in-memory copy of `kb_chunk_vectors` (a {@link ChunkIndex}), loaded once
 * and then kept current from `kb_chunk_vector_changes`, the change log written by trigger
 * (database/change-log.ts): before a search (at most every REFRESH_INTERVAL_MS) it reads
 * the log entries it has not applied yet (one indexed query, usually empty) and reloads only
 * those documents, so several servers on one database all see every write.
 */
export class PostgresVectorReplica {
  private readonly logger = new Logger('PostgresVectorReplica');
  private index: ChunkIndex | undefined;
  private position: LogPosition | undefined;
  private readonly refresher = new SharedRefresh(() => this.catchUp());
  private lastPrune = 0;
  private lastRefresh = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly dimensions: number,
  ) {
    this.timer = setInterval(() => {
      if (this.index) this.refresh().catch((e) => this.logger.warn(`refresh: ${String(e)}`));
    }, BACKGROUND_REFRESH_MS);
    this.timer.unref();
  }

  /** Sizes of the copy, for the readiness check. */
  get stats(): { loaded: boolean; documents: number; chunks: number; bytes: number } {
    return {
      loaded: this.index !== undefined,
      documents: this.index?.documentCount ?? 0,
      chunks: this.index?.chunkCount ?? 0,
      bytes: this.index?.vectorBytes ?? 0,
    };
  }

  /** Searches the copy, reading the change log first when the last read is old enough. */
  async search(
    query: Float32Array,
    limit: number,
    filter: IndexFilter,
    chunksPerDocument: 1 | 2 = 1,
  ): Promise<IndexHit[]> {
    if (!this.index || Date.now() - this.lastRefresh >= REFRESH_INTERVAL_MS) await this.refresh();
    return this.index!.search(query, limit, filter, chunksPerDocument);
  }

  /**
   * Takes documents this server has just written (committed) without waiting for the log,
   * one document per turn of the event loop (a 1 MiB document is some 600 chunks).
   */
  async apply(documents: readonly DocumentPoints[]): Promise<void> {
    for (const [i, document] of documents.entries()) {
      if (i > 0) await setImmediate();
      this.index?.set({
        documentId: document.documentId,
        revision: document.revision,
        tags: document.tags,
        ancestors: ancestorsOf(document.documentId),
        chunks: document.chunks.map((c) => ({ chunkIndex: c.chunkIndex, vector: c.vector })),
      });
    }
  }

  /** Forgets documents this server has just deleted (committed). */
  remove(documentIds: readonly string[]): void {
    for (const documentId of documentIds) this.index?.remove(documentId);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.refresher.settled();
  }

  /**
   * Brings the in-memory index up to date with the table. Concurrent callers share one
   * refresh; the first call (or one after the log was pruned past us) loads everything.
   */
  refresh(): Promise<void> {
    return this.refresher.refresh();
  }

  private async catchUp(): Promise<void> {
    if (this.closed) return;
    this.lastRefresh = Date.now();
    if (!this.index || !this.position) return this.load();
    const changes = await changesSince(
      (text, values) => this.dataSource.query(text, values),
      CHANGE_LOG,
      this.position,
    );
    if (!changes) return this.load();
    // In pages, so that a large catch-up (a bulk re-index elsewhere) never holds the event
    // loop for long; and only documents whose revision or chunk count differ from what this
    // server holds are read in full (its own writes are usually already here).
    for (let at = 0; at < changes.documents.length; at += LOAD_PAGE_ROWS) {
      const page = changes.documents.slice(at, at + LOAD_PAGE_ROWS);
      const stored: { document_id: string; revision: number; chunks: number }[] =
        await this.dataSource.query(
          `SELECT document_id, min(revision) AS revision, count(*)::int AS chunks
             FROM kb_chunk_vectors WHERE document_id = ANY($1::text[]) GROUP BY document_id`,
          [page],
        );
      const current = new Map(stored.map((r) => [r.document_id, r]));
      const stale: string[] = [];
      for (const documentId of page) {
        const row = current.get(documentId);
        const held = this.index.versionOf(documentId);
        if (!row) this.index.remove(documentId);
        else if (held?.revision !== row.revision || held.chunks !== row.chunks) {
          stale.push(documentId);
        }
      }
      if (stale.length === 0) continue;
      const rows: ChunkRow[] = await this.dataSource.query(
        `${SELECT_CHUNKS} WHERE document_id = ANY($1::text[]) ORDER BY document_id, chunk_index`,
        [stale],
      );
      const documents = groupRows(rows);
      for (const documentId of stale) {
        this.index.set(documents.get(documentId) ?? emptyDocument(documentId));
      }
    }
    this.position = changes.next;
    await this.pruneNowAndThen();
  }

  /** Reads every vector in one consistent snapshot, then swaps the new index in. */
  private async load(): Promise<void> {
    const started = Date.now();
    const runner = this.dataSource.createQueryRunner('slave');
    await runner.connect();
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const head = await logHead((text) => runner.query(text), CHANGE_LOG);
      const index = new ChunkIndex(this.dimensions);
      const select = SELECT_CHUNKS;
      for (let after = ''; ;) {
        const rows: ChunkRow[] = await runner.query(
          `${select} WHERE document_id > $1 ORDER BY document_id, chunk_index LIMIT ${LOAD_PAGE_ROWS}`,
          [after],
        );
        if (rows.length < LOAD_PAGE_ROWS) {
          for (const document of groupRows(rows).values()) index.set(document);
          break;
        }
        // A full page may end inside a document: that one is read again with the next page.
        const last = rows[rows.length - 1].document_id;
        let complete = rows.filter((r) => r.document_id !== last);
        if (complete.length === 0) {
          complete = await runner.query(`${select} WHERE document_id = $1 ORDER BY chunk_index`, [
            last,
          ]);
        }
        for (const document of groupRows(complete).values()) index.set(document);
        after = complete[complete.length - 1].document_id;
      }
      await runner.query('COMMIT');
      this.index = index;
      // A write of this server that committed during the load went into the old index:
      // the next search reads the log first.
      this.lastRefresh = 0;
      this.position = head;
      this.logger.log(
        `loaded ${index.chunkCount} chunk vectors of ${index.documentCount} documents in ${Date.now() - started} ms`,
      );
    } catch (error) {
      await runner.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  private async pruneNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    await pruneLog(
      (text, values) => this.dataSource.query(text, values),
      CHANGE_LOG,
      CHANGE_RETENTION_MS,
    );
  }
}

function groupRows(rows: ChunkRow[]): Map<string, IndexedDocument> {
  const documents = new Map<string, IndexedDocument & { chunks: IndexedChunk[] }>();
  for (const row of rows) {
    let document = documents.get(row.document_id);
    if (!document) {
      document = {
        documentId: row.document_id,
        revision: row.revision,
        tags: row.tags,
        ancestors: row.ancestors,
        chunks: [],
      };
      documents.set(row.document_id, document);
    }
    document.chunks.push({ chunkIndex: row.chunk_index, vector: decodeVector(row.embedding) });
  }
  return documents;
}

function emptyDocument(documentId: string): IndexedDocument {
  return { documentId, tags: [], ancestors: [], chunks: [] };
}
