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
import {
  admits,
  DocumentFilter,
  filterKey,
  IndexedLexicalDocument,
  LexicalIndex,
  LexicalMatch,
  WeightedTerm,
} from './lexical-index';
import { SNAPSHOT_FORMAT, SnapshotReader, writeSnapshot } from './lexical-snapshot';
import { LexicalSnapshotRepository } from './lexical-snapshot.repository';
import type { LsaModel, TermCounts } from '../semantic/lsa';
import { ModelRows, semanticIndexOf } from './model-rows';
import { documentOf, countsOf, type LexicalRow, SELECT_DOCUMENTS } from './lexical-rows';
import { SemanticIndex, SemanticMatch } from '../semantic/semantic-index';

const CHANGE_LOG: ChangeLog = { log: 'kb_lexical_changes', meta: 'kb_lexical_meta' };
/** Change-log rows older than this are pruned; a server further behind reloads everything. */
const CHANGE_RETENTION_MS = 60 * 60 * 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** Catch up in the background too, so an idle server never falls far behind. */
const BACKGROUND_REFRESH_MS = 30 * 1000;
/**
 * How stale the index may be for writes made by other servers: a search reads the change
 * log only if the last read started longer ago than this. This server's own writes are
 * applied as soon as they commit.
 */
const REFRESH_INTERVAL_MS = 100;
const LOAD_PAGE_ROWS = 500;
/** Document vectors computed per turn of the event loop when a new model arrives. */
const VECTORS_PER_TURN = 500;
/**
 * The snapshot (lexical-snapshot.ts) is written once the index has not changed for
 * SNAPSHOT_QUIET_MS, checked every SNAPSHOT_CHECK_MS: soon after the index was built from the
 * records, then at most every SNAPSHOT_EVERY_MS while it changes (well within the change
 * log's retention, past which a snapshot can no longer be brought up to date).
 */
const SNAPSHOT_CHECK_MS = 60 * 1000;
const SNAPSHOT_QUIET_MS = 30 * 1000;
const SNAPSHOT_EVERY_MS = 10 * 60 * 1000;
/**
 * A server that stops with changes its snapshot does not hold writes it first, for at most
 * this long (the chart's grace period leaves 15 s after the drain; a snapshot of 250 000
 * documents took 10 s to write), so a restart soon after a bulk load reads it rather than
 * rebuilding the index from the records.
 */
const SNAPSHOT_ON_STOP_MS = 10 * 1000;
/**
 * Changes of the index since the kept snapshot below which a stopping server does not write
 * it: the next start replays that many in well under a second, where a snapshot is written
 * whole (some 2.5 KB a document) and a short-lived process (`agent-data mcp`) would wait on it.
 */
const SNAPSHOT_ON_STOP_CHANGES = 1000;

/**
 * This server's in-memory copy of `kb_lexical_documents` (a {@link LexicalIndex}), loaded
 * once and then kept current from `kb_lexical_changes`, the change log written by trigger
 * (database/change-log.ts), so every server on one database ranks every document, whoever
 * indexed it. The statistics of the ranking (documents, document frequencies, average
 * lengths) are those of the copy, exact for the documents it holds.
 */
export class LexicalReplica {
  private readonly logger = new Logger('LexicalReplica');
  private index: LexicalIndex | undefined;
  /** The documents' vectors under the latest semantic model, once there is one. */
  private semantic: SemanticIndex | undefined;
  private model: LsaModel | undefined;
  /** While vectors for a new model are computed: documents changed meanwhile. */
  private changedDuringBuild: Set<string> | undefined;
  /** When a document was last set or removed here (0: never). */
  lastChange = 0;
  private position: LogPosition | undefined;
  private readonly refresher = new SharedRefresh(() => this.catchUp());
  private lastPrune = 0;
  private lastRefresh = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;
  /** Once stopping: when a snapshot still being written is given up (ms since the epoch). */
  private stopBy = Infinity;
  /** Where the snapshot is kept, when this server reads and writes one. */
  private readonly snapshots: LexicalSnapshotRepository | undefined;
  /** The index and its number of changes the kept snapshot reflects, and when it was saved. */
  private saved:
    { index: LexicalIndex; changes: number; semantic?: SemanticIndex; at: number } | undefined;
  private saving: Promise<boolean> | undefined;
  /** Where the index was last loaded from. */
  loadedFrom: 'snapshot' | 'records' | undefined;

  /**
   * `snapshots`: the index is loaded from its snapshot when one can be brought up to date, and
   * the snapshot is written when due (a cluster's web workers hold no index of their own).
   */
  constructor(
    private readonly dataSource: DataSource,
    options: { snapshots?: boolean } = {},
  ) {
    this.snapshots = options.snapshots ? new LexicalSnapshotRepository(dataSource) : undefined;
    this.timers.push(
      setInterval(() => {
        if (this.databaseClosed()) return;
        if (this.index) this.refresh().catch((e) => this.logger.warn(`refresh: ${String(e)}`));
      }, BACKGROUND_REFRESH_MS),
    );
    if (this.snapshots) {
      this.timers.push(
        setInterval(() => {
          if (this.databaseClosed()) return;
          this.saveSnapshot().catch((e) => this.logger.warn(`snapshot not saved: ${String(e)}`));
        }, SNAPSHOT_CHECK_MS),
      );
    }
    for (const timer of this.timers) timer.unref();
  }

  /**
   * Whether the database was closed under a replica never stopped (its owner gone without
   * `close`): its background work ends then, rather than failing and saying so every period.
   */
  private databaseClosed(): boolean {
    if (this.dataSource.isInitialized) return false;
    for (const timer of this.timers) clearInterval(timer);
    return true;
  }

  get stats(): { loaded: boolean; documents: number; terms: number; postings: number } {
    return {
      loaded: this.index !== undefined,
      documents: this.index?.documentCount ?? 0,
      terms: this.index?.termCount ?? 0,
      postings: this.index?.postings ?? 0,
    };
  }

  /** The semantic model whose vectors are searched, if any. */
  get semanticModel(): LsaModel | undefined {
    return this.semantic?.model;
  }

  /** The current index, read from the change log first when the last read is old enough. */
  async current(): Promise<LexicalIndex> {
    if (!this.index || Date.now() - this.lastRefresh >= REFRESH_INTERVAL_MS) await this.refresh();
    return this.index!;
  }

  async search(
    terms: readonly WeightedTerm[],
    limit: number,
    filter?: DocumentFilter,
  ): Promise<LexicalMatch[]> {
    return (await this.current()).search(terms, limit, filter);
  }

  /**
   * The documents nearest the query's terms under the semantic model, or `undefined` while
   * there is none.
   */
  async semanticSearch(
    query: TermCounts,
    limit: number,
    filter?: DocumentFilter,
  ): Promise<SemanticMatch[] | undefined> {
    const index = await this.current();
    if (!this.semantic || filter === undefined) return this.semantic?.search(query, limit);
    // A narrow filter's documents, and those of readable folders however many, are read
    // from the lexical index's folder and tag sets.
    const ids = index.admitted(filter, filter.folders === undefined ? undefined : 1);
    // Named by the filter and the lexical index's state, so its rows are read once.
    const key = `${index.changes}\u0002${filterKey(filter)}`;
    return this.semantic.search(query, limit, ids ? { ids, key } : admits(filter));
  }

  /** Takes documents this server has just written (committed), one per turn of the event loop. */
  async apply(documents: readonly IndexedLexicalDocument[]): Promise<void> {
    for (const [i, document] of documents.entries()) {
      if (i > 0) await setImmediate();
      const index = this.index;
      if (!index) continue;
      // Its anchor field written again meanwhile, and read from the change log already.
      const held = index.versionOf(document.documentId);
      if (
        held === document.revision &&
        index.anchorStampOf(document.documentId) > (document.anchorStamp ?? 0)
      )
        continue;
      this.put(index, document);
    }
  }

  /** Forgets documents this server has just removed (committed). */
  remove(documentIds: readonly string[]): void {
    for (const documentId of documentIds) this.drop(documentId);
  }

  /**
   * Computes every document's vector under `model` (a few hundred per turn of the event
   * loop), then searches with them; documents changed meanwhile are computed again at the end.
   */
  async useModel(model: LsaModel): Promise<void> {
    this.model = model;
    const index = this.index;
    if (!index) return; // the load computes them
    const semantic = new SemanticIndex(model);
    const rows = new ModelRows(index, semantic.embedder);
    const changed = new Set<string>();
    this.changedDuringBuild = changed;
    try {
      let done = 0;
      for (const { documentId, tags } of [...index.documents()]) {
        const vector = rows.vectorOf(documentId);
        if (vector) semantic.setVector(documentId, tags, vector);
        if (++done % VECTORS_PER_TURN === 0) await setImmediate();
        // Reloaded or replaced meanwhile, or stopping (the snapshot at stop holds the vectors
        // of the model before).
        if (this.index !== index || this.model !== model || this.stopBy !== Infinity) return;
      }
      for (const documentId of changed) {
        const vector = rows.vectorOf(documentId);
        if (vector === undefined) semantic.remove(documentId);
        else semantic.setVector(documentId, index.tagsOf(documentId) ?? [], vector);
      }
      this.semantic = semantic;
    } finally {
      // Also when given up for a reloaded index: a build left marked in progress would keep
      // every later snapshot from being saved (and collect every change) until the next model.
      if (this.changedDuringBuild === changed) this.changedDuringBuild = undefined;
    }
  }

  private put(index: LexicalIndex, document: IndexedLexicalDocument): void {
    // Only what links say of it changed: its counts, and so its semantic vector, are the same.
    const revised = index.set(document);
    this.lastChange = Date.now();
    if (index !== this.index) return;
    if (!revised) this.semantic?.set(document.documentId, document.tags, countsOf(document));
    this.changedDuringBuild?.add(document.documentId);
  }

  private drop(documentId: string, index = this.index): void {
    index?.remove(documentId);
    this.lastChange = Date.now();
    if (index !== this.index) return;
    this.semantic?.remove(documentId);
    this.changedDuringBuild?.add(documentId);
  }

  /**
   * Stops the background work (no refresh or load starts from then on); with snapshots, first
   * writes the snapshot when the index has changed at least `minChanges` times since the one
   * kept reflects (or no kept one does), given up past `withinMs`, the kept one staying. Call
   * it once what writes to the index (the pipeline) has stopped.
   */
  async close({
    withinMs = SNAPSHOT_ON_STOP_MS,
    minChanges = SNAPSHOT_ON_STOP_CHANGES,
  }: { withinMs?: number; minChanges?: number } = {}): Promise<void> {
    if (this.stopBy !== Infinity) return;
    // A snapshot being written when the stop comes is held to the same bound.
    this.stopBy = Date.now() + withinMs;
    for (const timer of this.timers) clearInterval(timer);
    await this.refresher.settled();
    await this.saving?.catch(() => undefined);
    if (this.index && this.unsavedChanges() >= minChanges) {
      await this.saveSnapshot(true)
        .then((written) => {
          if (!written && Date.now() >= this.stopBy) {
            this.logger.warn(`the snapshot at stop was given up after ${withinMs} ms`);
          }
        })
        .catch((e) => this.logger.warn(`snapshot not saved at stop: ${String(e)}`));
    }
    this.closed = true;
  }

  /**
   * Changes of the index the kept snapshot does not hold: Infinity when it is of another index
   * (or none was kept), or of other semantic vectors.
   */
  private unsavedChanges(): number {
    const { index, saved } = this;
    if (!index || saved?.index !== index || saved.semantic !== this.semantic) return Infinity;
    return index.changes - saved.changes;
  }

  /** Brings the index up to date; concurrent callers share one refresh. */
  refresh(): Promise<void> {
    return this.refresher.refresh();
  }

  private async catchUp(): Promise<void> {
    // Stopping: the index stays as it is while its snapshot is written.
    if (this.closed || this.stopBy !== Infinity) return;
    this.lastRefresh = Date.now();
    if (!this.index || !this.position) return this.load();
    const replayed = await this.replay(this.index, this.position);
    if (!replayed) return this.load();
    this.position = replayed.next;
    const query = (text: string, values?: unknown[]) => this.dataSource.query(text, values);
    if (Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      await pruneLog(query, CHANGE_LOG, CHANGE_RETENTION_MS);
    }
  }

  /**
   * Applies to `index` the changes logged since `position`: the position after them and the
   * documents changed, or `undefined` when the log no longer reaches back to `position`.
   */
  private async replay(
    index: LexicalIndex,
    position: LogPosition,
  ): Promise<{ next: LogPosition; documents: readonly string[] } | undefined> {
    const query = (text: string, values?: unknown[]) => this.dataSource.query(text, values);
    const changes = await changesSince(query, CHANGE_LOG, position);
    if (!changes) return undefined;
    for (let at = 0; at < changes.documents.length; at += LOAD_PAGE_ROWS) {
      const page = changes.documents.slice(at, at + LOAD_PAGE_ROWS);
      const stored: Array<{ document_id: string; revision: number; anchor_stamp: number }> =
        await query(
          `SELECT document_id, revision, anchor_stamp FROM kb_lexical_documents
            WHERE document_id = ANY($1::text[])`,
          [page],
        );
      const current = new Map(stored.map((r) => [r.document_id, r]));
      const stale: string[] = [];
      for (const documentId of page) {
        const row = current.get(documentId);
        if (row === undefined) this.drop(documentId, index);
        else if (
          index.versionOf(documentId) !== row.revision ||
          index.anchorStampOf(documentId) !== row.anchor_stamp
        )
          stale.push(documentId);
      }
      if (stale.length === 0) continue;
      const rows: LexicalRow[] = await query(
        `${SELECT_DOCUMENTS} WHERE document_id = ANY($1::text[])`,
        [stale],
      );
      for (const row of rows) this.put(index, documentOf(row));
      await setImmediate();
    }
    return { next: changes.next, documents: changes.documents };
  }

  /**
   * Writes the index's snapshot when due (see SNAPSHOT_EVERY_MS), or now with `force`; given
   * up if the index changes meanwhile, or once a stop's bound has passed. Whether one was
   * written.
   */
  async saveSnapshot(force = false): Promise<boolean> {
    const { index, position, saved } = this;
    if (!this.snapshots || !index || !position || this.saving || this.closed) return false;
    if (Date.now() >= this.stopBy) return false;
    // A model's vectors being computed: saved with them once they are. Not at a stop: the index
    // is written with the vectors of the model before (kept current meanwhile), which a start
    // under the new model leaves aside and computes its own.
    if (this.changedDuringBuild && this.stopBy === Infinity) return false;
    const semantic = this.semantic;
    const unsaved = this.unsavedChanges();
    if (unsaved === 0) return false;
    if (!force && Date.now() - this.lastChange < SNAPSHOT_QUIET_MS) return false;
    if (!force && unsaved !== Infinity && Date.now() - saved!.at < SNAPSHOT_EVERY_MS) return false;
    const started = Date.now();
    const changes = index.changes;
    const state = index.state();
    const writing = writeSnapshot(
      state,
      semantic && {
        modelId: semantic.model.id,
        dimensions: semantic.model.dimensions,
        row: (slot) =>
          semantic.vectorOf(state.ids[slot]!) ?? new Float32Array(semantic.model.dimensions),
      },
    );
    const parts = writing.layout.sections.reduce((sum, section) => sum + section.parts, 0);
    this.saving = this.snapshots.save(
      {
        format: SNAPSHOT_FORMAT,
        position,
        layout: writing.layout,
        parts,
        documents: index.documentCount,
      },
      writing.parts(),
      () =>
        this.index === index &&
        index.changes === changes &&
        this.semantic === semantic &&
        !this.closed &&
        Date.now() < this.stopBy,
      // Another server saving: a periodic save gives way (the next period tries again), a
      // stop's waits within its bound.
      this.stopBy === Infinity ? 0 : this.stopBy - Date.now(),
    );
    try {
      const done = await this.saving;
      if (done) {
        this.saved = { index, changes, semantic, at: Date.now() };
        this.logger.log(
          `saved the lexical index's snapshot (${index.documentCount} documents, ${parts} parts) in ${Date.now() - started} ms`,
        );
      }
      return done;
    } finally {
      this.saving = undefined;
    }
  }

  /**
   * The index read from its snapshot and brought up to date from the change log, swapped in;
   * false (and nothing changed) when there is none, or it cannot be read or brought up to date.
   */
  private async loadSnapshot(): Promise<boolean> {
    const started = Date.now();
    try {
      const found = await this.snapshots!.load(SNAPSHOT_FORMAT, (header) => {
        const reader = new SnapshotReader(header.layout);
        if (reader.parts !== header.parts) throw new Error('its parts do not match its layout');
        const finish = () => ({ state: reader.state(), vectors: reader.vectors() });
        return { accept: (part) => reader.accept(part), finish };
      });
      if (!found) return false;
      const { state, vectors } = found.value;
      const index = await LexicalIndex.restore(state);
      const model = this.model;
      // The vectors read back when they are the current model's.
      const semantic =
        model && vectors?.modelId === model.id && vectors.dimensions === model.dimensions
          ? await semanticIndexOf(model, state, vectors)
          : undefined;
      const read = Date.now() - started;
      const changes = index.changes;
      const replayed = await this.replay(index, found.header.position);
      if (!replayed) {
        this.logger.log('the lexical snapshot is older than the change log reaches back');
        return false;
      }
      if (semantic) {
        const rows = new ModelRows(index, semantic.embedder);
        for (const documentId of replayed.documents) {
          const vector = rows.vectorOf(documentId);
          if (vector === undefined) semantic.remove(documentId);
          else semantic.setVector(documentId, index.tagsOf(documentId) ?? [], vector);
        }
      }
      this.index = index;
      this.position = replayed.next;
      this.lastRefresh = 0;
      this.loadedFrom = 'snapshot';
      this.saved = { index, changes, semantic, at: Date.now() };
      if (semantic && this.model === model) this.semantic = semantic;
      else if (this.model) {
        this.useModel(this.model).catch((e) => this.logger.warn(`semantic vectors: ${String(e)}`));
      }
      this.logger.log(
        `loaded the lexical index of ${index.documentCount} documents (${index.postings} postings${semantic ? ' and their semantic vectors' : ''}) from its snapshot in ${read} ms, and ${replayed.documents.length} documents changed since in ${Date.now() - started - read} ms`,
      );
      return true;
    } catch (error) {
      this.logger.warn(`the lexical snapshot is not used: ${(error as Error).message}`);
      return false;
    }
  }

  /**
   * Reads every document in one consistent snapshot, then swaps the new index in; from the
   * index's own snapshot rather than the records when there is one to bring up to date.
   */
  private async load(): Promise<void> {
    if (this.snapshots && (await this.loadSnapshot())) return;
    const started = Date.now();
    const runner = this.dataSource.createQueryRunner('slave');
    await runner.connect();
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const head = await logHead((text) => runner.query(text), CHANGE_LOG);
      const index = new LexicalIndex();
      const model = this.model;
      const semantic = model && new SemanticIndex(model);
      for (let after = ''; ;) {
        const rows: LexicalRow[] = await runner.query(
          `${SELECT_DOCUMENTS} WHERE document_id > $1 ORDER BY document_id LIMIT ${LOAD_PAGE_ROWS}`,
          [after],
        );
        for (const row of rows) {
          const document = documentOf(row);
          index.set(document);
          semantic?.set(document.documentId, document.tags, countsOf(document));
        }
        if (rows.length < LOAD_PAGE_ROWS) break;
        after = rows[rows.length - 1].document_id;
        await setImmediate();
      }
      await runner.query('COMMIT');
      index.trim();
      this.index = index;
      // A model that arrived during the load computes its vectors from the new index.
      if (model === this.model) this.semantic = semantic;
      else if (this.model) {
        this.useModel(this.model).catch((e) => this.logger.warn(`semantic vectors: ${String(e)}`));
      }
      // A write of this server that committed during the load went into no index: the next
      // search reads the log first.
      this.lastRefresh = 0;
      this.position = head;
      this.loadedFrom = 'records';
      this.logger.log(
        `loaded the lexical index of ${index.documentCount} documents (${index.postings} postings) in ${Date.now() - started} ms`,
      );
    } catch (error) {
      await runner.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }
}
