import { DomainError, ErrorCode } from '../common/domain-error';
import type { SourceDocument } from '../conversion/file-document';
import { Access } from '../documents/access';
import { sourceActor } from '../documents/document-sources';
import type { BulkItem } from '../documents/document-bulk';
import type { DocumentsService } from '../documents/documents.service';
import type { Enumeration, SourceItem } from './connectors/connector';
import type { SourceDeclaration } from './source-declaration';
import { SOURCE_DEFAULTS } from './source-declaration';
import { NO_COUNTS, type ItemRow, type SourcesRepository } from './sources.repository';
import type { RunCounts } from './sources.schemas';

/** Items written per bulk call, and items read (loaded, converted) at once. */
const BATCH = 200;
const READERS = 8;
/**
 * Bulk writes in flight at once: while PostgreSQL commits one batch, the server prepares the
 * next (its ids looked up, its claims written, its documents checked), as `agent-data import`
 * keeps two requests in flight.
 */
const WRITERS = 2;
/** Failed items kept in a run's record (the count says how many in all). */
const FAILED_KEPT = 200;
/**
 * What a document's provenance says of the reading that made its revision rather than of the
 * original: when it was read, and the version the connector saw (a file's size and times, a
 * page's ETag), which changes whenever the original is touched, copied or served anew. An
 * original read again and found to make the same document writes nothing, whatever these say
 * (docs/sources.md, "Documents a source owns").
 */
const READING_STAMPS = ['source_version', 'fetched_at'] as const;

export interface ReconcileInput {
  readonly declaration: SourceDeclaration;
  readonly runId: string;
  readonly enumeration: Enumeration;
  readonly known: ReadonlyMap<string, ItemRow>;
  readonly confirmDeletions: boolean;
  readonly signal: AbortSignal;
}

export interface ReconcileResult {
  readonly counts: RunCounts;
  readonly failedItems: Array<{ key: string; document_id: string; reason: string }>;
  /** Deletions held for a confirmation (more than max_delete of the source's documents). */
  readonly held: { keys: string[]; run_id: string } | null;
}

/**
 * Makes the knowledge base hold what one enumeration found, writing only the difference:
 * an item whose version is the one written before is neither read nor written; a changed or
 * new one is read and written through the bulk path (an update that changes nothing writes
 * nothing); a rename is a move; and only when the enumeration was complete, the documents of
 * items the source no longer has are deleted (softly) — never for an item that failed, never
 * more than `max_delete` of them without a confirmation, and never a document the source did
 * not write (an agent's document under the mount is not in `known`).
 */
export class Reconciliation {
  private readonly counts: RunCounts = { ...NO_COUNTS };
  private readonly failed: ReconcileResult['failedItems'] = [];
  /** Each listed item's document id, by key (see {@link name}). */
  private readonly ids = new Map<string, string>();
  private readonly access: Access;
  private readonly actor: string;

  constructor(
    private readonly input: ReconcileInput,
    private readonly documents: DocumentsService,
    private readonly repository: SourcesRepository,
    private readonly logger: { warn(message: string): void },
  ) {
    this.access = Access.ofSource(input.declaration.id);
    this.actor = sourceActor(input.declaration.id);
  }

  async run(): Promise<ReconcileResult> {
    const { enumeration, known } = this.input;
    this.counts.checked = enumeration.items.length + enumeration.failed.length;
    this.counts.skipped = enumeration.skipped.length;
    for (const { key, reason } of enumeration.failed) this.fail(key, reason);
    if (enumeration.unchanged) {
      // The source vouched for everything at once (a git commit that did not move): each item
      // it holds was checked, and found unchanged, without being listed one by one.
      this.counts.checked += known.size;
      this.counts.unchanged = known.size;
      return this.result(null);
    }
    // A moved item's version is forgotten (moveItem): its document is read again below and
    // written naming its new path, as a folder's renamed file is.
    const movedFrom = await this.moves();
    const current = await this.name(
      await this.repository.items(this.input.declaration.id),
      movedFrom,
    );
    const changed: SourceItem[] = [];
    /** Unchanged, but found under another URI or with new validators: noted, not written. */
    const renoted: SourceItem[] = [];
    for (const item of enumeration.items) {
      if (!this.ids.has(item.key)) continue;
      const before = current.get(item.key);
      if (before !== undefined && before.version === item.version) {
        this.counts.unchanged++;
        if (before.uri !== item.uri || !sameValidators(before.validators, item.validators)) {
          renoted.push(item);
        }
      } else {
        changed.push(item);
      }
    }
    for (let at = 0; at < renoted.length; at += BATCH) {
      await this.repository.recordItems(this.input.declaration.id, renoted.slice(at, at + BATCH));
    }
    // The next batch is read while the ones before it are written: reading and writing each
    // take about half of a first sync's time, and wait on different things (the disk,
    // PostgreSQL). Batches hold distinct keys, so their writes do not depend on each other.
    const writing: Array<Promise<void>> = [];
    try {
      let reading = readAll(changed.slice(0, BATCH));
      for (let at = 0; at < changed.length; at += BATCH) {
        this.input.signal.throwIfAborted();
        const documents = await reading;
        reading = readAll(changed.slice(at + BATCH, at + 2 * BATCH));
        const write = this.write(changed.slice(at, at + BATCH), documents, current);
        // Awaited below, in order; a failure while an earlier one is awaited is not lost.
        write.catch(() => undefined);
        writing.push(write);
        if (writing.length >= WRITERS) await writing.shift();
      }
      while (writing.length > 0) await writing.shift();
    } finally {
      // A run that stops (aborted, a write failed) ends once nothing of it is still writing.
      await Promise.allSettled(writing);
    }
    return this.result(await this.deletions(movedFrom));
  }

  /** The renames the connector saw, as moves of their documents. */
  private async moves(): Promise<Set<string>> {
    const movedFrom = new Set<string>();
    const { known, enumeration, declaration } = this.input;
    const fresh = new Set(enumeration.items.map((item) => item.key));
    for (const { from, to } of enumeration.moves ?? []) {
      const item = known.get(from);
      if (item === undefined || !fresh.has(to) || known.has(to)) continue;
      const target = this.documentId(to);
      try {
        // A name written again in another Unicode form (`é` composed, or `e` and an accent)
        // names the same document: only the item's key changes.
        if (target !== item.document_id) {
          await this.documents.move(item.document_id, { to: target }, this.actor, this.access);
          this.counts.moved++;
        }
        await this.repository.moveItem(declaration.id, from, to, target);
        movedFrom.add(from);
      } catch (error) {
        // The move failed (say the new id is taken): the item is written as a new one and
        // the old document deleted with the others, if the enumeration allows.
        this.logger.warn(`source ${declaration.id}: moving ${from} to ${to}: ${messageOf(error)}`);
      }
    }
    return movedFrom;
  }

  /** Writes a batch of new or changed items, read (`documents`: each one's, or its error). */
  private async write(
    items: SourceItem[],
    documents: ReadonlyArray<SourceDocument | Error>,
    current: ReadonlyMap<string, ItemRow>,
  ): Promise<void> {
    const sourceId = this.input.declaration.id;
    const ids = items.map((item) => this.ids.get(item.key)!);
    const alive = await this.documents.getMany(ids, Access.EVERYTHING);
    const bulk: BulkItem[] = [];
    const written: SourceItem[] = [];
    const claims: Array<{ key: string; documentId: string; uri: string }> = [];
    for (const [i, item] of items.entries()) {
      const document = documents[i];
      const id = ids[i];
      if (document instanceof Error) {
        this.fail(item.key, document.message);
        continue;
      }
      const fields = { ...document, metadata: this.provenance(document, item) };
      if (current.has(item.key)) {
        bulk.push(
          alive.has(id)
            ? { op: 'update', document_id: id, ...fields }
            : { op: 'create', document_id: id, ...fields },
        );
      } else if (alive.has(id)) {
        this.fail(
          item.key,
          `a document this source did not write is at ${id}: move it away, or mount the source elsewhere`,
        );
        continue;
      } else {
        claims.push({ key: item.key, documentId: id, uri: item.uri });
        bulk.push({ op: 'create', document_id: id, ...fields });
      }
      written.push(item);
    }
    await this.repository.claim(sourceId, claims);
    const outcomes = await this.documents.bulk(bulk, this.actor, this.access, {
      stamps: READING_STAMPS,
    });
    const unclaimed: string[] = [];
    const recorded: SourceItem[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const item = written[i];
      if (outcome.error !== undefined) {
        if (bulk[i].op === 'create' && !current.has(item.key)) unclaimed.push(item.key);
        this.fail(item.key, outcome.error.message);
        continue;
      }
      recorded.push(item);
      if (outcome.created) this.counts.created++;
      else if (outcome.changed) this.counts.updated++;
      else this.counts.unchanged++;
    }
    if (unclaimed.length > 0) await this.repository.forgetItems(sourceId, unclaimed);
    await this.repository.recordItems(sourceId, recorded);
  }

  /**
   * The documents of items the source no longer has, deleted when the enumeration was
   * complete; held (not deleted) beyond `max_delete` of the source's documents unless the
   * run was asked to confirm them.
   */
  private async deletions(movedFrom: ReadonlySet<string>): Promise<ReconcileResult['held']> {
    const { enumeration, known, declaration, confirmDeletions, runId } = this.input;
    if (!enumeration.complete) return null;
    const seen = new Set([
      ...enumeration.items.map((item) => item.key),
      ...enumeration.failed.map((item) => item.key),
      ...enumeration.skipped.map((item) => item.key),
      ...movedFrom,
    ]);
    const gone = [...known.keys()].filter((key) => !seen.has(key)).sort();
    if (gone.length === 0) return null;
    const share = declaration.max_delete ?? SOURCE_DEFAULTS.max_delete;
    if (gone.length > share * known.size && !confirmDeletions) {
      this.counts.held = gone.length;
      return { keys: gone, run_id: runId };
    }
    for (let at = 0; at < gone.length; at += BATCH) {
      const keys = gone.slice(at, at + BATCH);
      const outcomes = await this.documents.bulk(
        keys.map((key) => ({ op: 'delete' as const, document_id: known.get(key)!.document_id })),
        this.actor,
        this.access,
      );
      const done: string[] = [];
      outcomes.forEach((outcome, k) => {
        // Deleted now, or gone already (deleted by hand before the source was declared).
        if (outcome.error === undefined || outcome.error.code === ErrorCode.NOT_FOUND) {
          done.push(keys[k]);
          if (outcome.error === undefined) this.counts.deleted++;
        } else {
          this.fail(keys[k], outcome.error.message);
        }
      });
      await this.repository.forgetItems(declaration.id, done);
    }
    return null;
  }

  /**
   * The document's metadata with where it came from (shown wherever the document is), and
   * when and at which version it was read: the {@link READING_STAMPS}.
   */
  private provenance(document: SourceDocument, item: SourceItem): Record<string, unknown> {
    return {
      ...document.metadata,
      source_id: this.input.declaration.id,
      source_uri: item.uri,
      source_version: item.version,
      fetched_at: new Date().toISOString(),
    };
  }

  /**
   * The document id of a new item: its key under the mount, the key in Unicode's composed form
   * (NFC), as `agent-data import` names a file: a name macOS wrote decomposed (`e` and a
   * combining accent) becomes the `é` people type and links name.
   */
  private documentId(key: string): string {
    return `${this.input.declaration.mount}/${key.normalize('NFC')}`;
  }

  /**
   * Each listed item's document id ({@link ids}): the one it was written under (an item an
   * earlier release named decomposed keeps it), or a new item's {@link documentId}. A new key
   * whose id an item of the source holds already names the same file in another Unicode form
   * (keys that differ only in how their accents are written): when that item is gone from a
   * complete listing, the file was renamed so and the item takes the new key (its document
   * stays, `movedFrom` keeps it from the deletions); when it is still there (both names exist,
   * as Linux, git and URLs allow), the new key fails, naming it. Gives the items as they now are.
   */
  private async name(
    rows: ReadonlyMap<string, ItemRow>,
    movedFrom: Set<string>,
  ): Promise<ReadonlyMap<string, ItemRow>> {
    const { enumeration, declaration } = this.input;
    const current = new Map(rows);
    const present = new Set(
      [...enumeration.items, ...enumeration.failed, ...enumeration.skipped].map((i) => i.key),
    );
    const holders = new Map([...current.values()].map((row) => [row.document_id, row.key]));
    for (const item of enumeration.items) {
      const row = current.get(item.key);
      if (row !== undefined) {
        this.ids.set(item.key, row.document_id);
        continue;
      }
      const id = this.documentId(item.key);
      const holder = holders.get(id);
      if (holder !== undefined && (present.has(holder) || !enumeration.complete)) {
        this.fail(item.key, `${holder} has this name, composed (NFC), and holds ${id}`);
        continue;
      }
      if (holder !== undefined) {
        await this.repository.moveItem(declaration.id, holder, item.key, id);
        current.set(item.key, { ...current.get(holder)!, key: item.key, version: null });
        current.delete(holder);
        movedFrom.add(holder);
      }
      this.ids.set(item.key, id);
      holders.set(id, item.key);
    }
    return current;
  }

  private fail(key: string, reason: string): void {
    this.counts.failed++;
    if (this.failed.length < FAILED_KEPT) {
      const documentId = this.ids.get(key) ?? this.input.known.get(key)?.document_id;
      this.failed.push({ key, document_id: documentId ?? this.documentId(key), reason });
    }
  }

  private result(held: ReconcileResult['held']): ReconcileResult {
    return { counts: this.counts, failedItems: this.failed, held };
  }
}

/** Each item's document, read a few at a time; an item that cannot be read is its error. */
async function readAll(items: readonly SourceItem[]): Promise<Array<SourceDocument | Error>> {
  const out = new Array<SourceDocument | Error>(items.length);
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      const item = items[i];
      try {
        if (item.document !== undefined) out[i] = item.document;
        else if (item.load !== undefined) out[i] = await item.load();
        else out[i] = new Error('the connector gave neither the document nor a way to read it');
      } catch (error) {
        out[i] = error instanceof Error ? error : new Error(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READERS, items.length) }, reader));
  return out;
}

function sameValidators(
  a: Readonly<Record<string, string>> | null | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

export function messageOf(error: unknown): string {
  if (error instanceof DomainError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
