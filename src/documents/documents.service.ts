// Longer than most files: every write of a document passes here (create, update, patch, delete,
// restore, move, bulk) with its validation, access and revision rules, kept together so that
// they cannot drift apart.
import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode, invalidArgument } from '../common/domain-error';
import { parentOf, validateDocumentId } from './document-id';
import {
  type Document,
  type HistoryResult,
  type Revision,
  type PatchInput,
  type patchResultSchema,
} from './document.schemas';
import { DocumentChanges, DocumentsRepository } from './documents.repository';
import { type BulkItem, type BulkOutcome, DocumentBulk } from './document-bulk';
import {
  contentHash,
  DocumentFields,
  type FieldsInput,
  type WriteOptions,
} from './document-fields';
import { documentFromRow, historyEntryFromRow, revisionFromRow } from './document-rows';
import type { Access } from './access';
import { DocumentSources } from './document-sources';
import { LinkMoves } from './link-moves';
import { linkRowOf } from './links/link-row';
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from './document-listings.service';
import type { RefusableOperation } from './write-operations';

export type CreateDocumentInput = Pick<Document, 'document_id' | 'body'> & FieldsInput;

export type UpdateDocumentInput = FieldsInput & Pick<PatchInput, 'expected_revision'>;

type PatchAnswer = z.output<typeof patchResultSchema>;

/** The written document and whether it changed (a REST write answers them side by side). */
export type WriteResult = { document: Document } & Pick<PatchAnswer, 'changed'>;

export type PatchResult = WriteResult & Pick<PatchAnswer, 'replacements'>;

/**
 * Attempts of a read-modify-write patch without `expected_revision` before giving up. A
 * patch loses a race only to another write that committed between its read and its write,
 * so N patches racing on one document need up to N attempts; 5 lost most of 20.
 */
const PATCH_ATTEMPTS = 64;

/**
 * The document rules (docs/documents.md): revisions, create-or-revive, compare-and-set
 * updates, patches, soft delete, restore and history. Each field's own rules (limits,
 * characters) are {@link DocumentFields}'; all SQL is in the repositories.
 */
@Injectable()
export class DocumentsService {
  constructor(
    private readonly repository: DocumentsRepository,
    config: AppConfig,
    private readonly sources: DocumentSources,
    private readonly linkMoves: LinkMoves,
  ) {
    this.fields = new DocumentFields(config.limits);
    this.bulkWrites = new DocumentBulk(repository, this.fields, {
      create: (input, actor, access) => this.create(input, actor, access),
      update: (id, input, actor, access, options) => this.update(id, input, actor, access, options),
      delete: (id, expected, actor, access) => this.delete(id, expected, actor, access),
      mayWrite: (operation, id, actor, access) => this.mayWrite(operation, id, actor, access),
      alreadyExists,
    });
  }

  private readonly fields: DocumentFields;
  private readonly bulkWrites: DocumentBulk;

  /**
   * The alive document, if `access` may read it: one outside its read grants is answered
   * exactly as an absent one (the same error, after the same query).
   */
  async get(documentId: string, access: Access): Promise<Document> {
    validateDocumentId(documentId);
    const row = await this.repository.findAlive(documentId, access.readablePatterns() ?? null);
    if (!row) throw await this.absent(documentId, access);
    return documentFromRow(row);
  }

  /**
   * {@link notFound}, naming the document the caller may read whose id is this one written in
   * the other Unicode form, if there is one: ids are matched byte for byte, and `é` typed as
   * one code point (NFC, what most keyboards give) or as `e` and a combining accent (NFD,
   * file names from macOS) looks the same. Asked whenever the id has another form, whoever
   * may read it, so an absent id and an unreadable one still take the same queries.
   */
  private async absent(documentId: string, access: Access): Promise<DomainError> {
    for (const form of ['NFC', 'NFD'] as const) {
      const other = documentId.normalize(form);
      if (other === documentId) continue;
      if ((await this.repository.findAlive(other, access.readablePatterns() ?? null)) !== null) {
        return notFound(documentId, access, { id: other, form });
      }
    }
    return notFound(documentId, access);
  }

  /** Alive documents among `ids` that `access` may read, keyed by id (others are missing). */
  async getMany(ids: readonly string[], access: Access): Promise<Map<string, Document>> {
    ids.forEach((id, i) => validateDocumentId(id, `document_ids[${i}]`));
    const rows = await this.repository.findManyAlive(
      [...new Set(ids)],
      access.readablePatterns() ?? null,
    );
    return new Map(rows.map((row) => [row.document_id, documentFromRow(row)]));
  }

  async create(input: CreateDocumentInput, actor: string, access: Access): Promise<Document> {
    const documentId = validateDocumentId(input.document_id);
    await this.mayWrite('create', documentId, actor, access);
    const content = this.fields.content(documentId, input);
    const row = await this.repository.insertOrRevive(
      documentId,
      parentOf(documentId),
      content,
      linkRowOf(documentId, content.body),
      actor,
    );
    if (!row) throw alreadyExists(documentId);
    return documentFromRow(row);
  }

  async update(
    documentId: string,
    input: UpdateDocumentInput,
    actor: string,
    access: Access,
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    validateDocumentId(documentId);
    await this.mayWrite('update', documentId, actor, access);
    const changes = this.fields.changes(input);
    const expected = this.fields.revision(input.expected_revision, 'expected_revision');
    if (changes.body !== undefined) changes.links = linkRowOf(documentId, changes.body);
    if (Object.keys(changes).length === 0) {
      throw invalidArgument(
        'body',
        'nothing to update: give at least one of body, title, tags, metadata',
      );
    }
    return this.applyChanges(documentId, changes, expected, actor, options.stamps ?? []);
  }

  /**
   * Replaces `old_str` by `new_str`: exactly one occurrence unless `replace_all`. The write is
   * conditional on the revision that was read, so a concurrent writer is never overwritten;
   * without `expected_revision` a lost race re-reads and tries again.
   */
  async patch(
    documentId: string,
    input: PatchInput,
    actor: string,
    access: Access,
  ): Promise<PatchResult> {
    validateDocumentId(documentId);
    await this.mayWrite('patch', documentId, actor, access);
    if (input.old_str === '') throw invalidArgument('old_str', 'must be a non-empty string');
    const expected = this.fields.revision(input.expected_revision, 'expected_revision');

    for (let attempt = 1; ; attempt++) {
      const current = await this.repository.findAlive(documentId);
      if (!current) throw notFound(documentId);
      if (expected !== undefined && current.revision !== expected)
        throw conflict(documentId, current.revision, expected);

      const occurrences = countOccurrences(current.body, input.old_str);
      if (occurrences === 0) {
        throw new DomainError(ErrorCode.PATCH_NO_MATCH, `old_str was not found in ${documentId}`, {
          document_id: documentId,
          revision: current.revision,
        });
      }
      if (occurrences > 1 && !input.replace_all) {
        throw new DomainError(
          ErrorCode.PATCH_AMBIGUOUS,
          `old_str occurs ${occurrences} times in ${documentId}; add surrounding text to make it unique, or pass replace_all: true`,
          { document_id: documentId, occurrences, revision: current.revision },
        );
      }
      const body = this.fields.body(current.body.split(input.old_str).join(input.new_str));
      if (body === current.body)
        return { document: documentFromRow(current), changed: false, replacements: occurrences };

      const row = await this.repository.updateIfChanged(
        documentId,
        { body, content_hash: contentHash(body), links: linkRowOf(documentId, body) },
        current.revision,
        actor,
      );
      if (row) return { document: documentFromRow(row), changed: true, replacements: occurrences };
      if (expected !== undefined || attempt >= PATCH_ATTEMPTS) {
        const state = await this.repository.findState(documentId);
        if (!state || state.deleted) throw notFound(documentId);
        throw conflict(documentId, state.revision, expected ?? current.revision);
      }
      // Lost a race: step aside a random moment so the losers do not collide again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 10)));
    }
  }

  async delete(
    documentId: string,
    expectedRevision: number | undefined,
    actor: string,
    access: Access,
  ): Promise<Document> {
    validateDocumentId(documentId);
    await this.mayWrite('delete', documentId, actor, access);
    const expected = this.fields.revision(expectedRevision, 'expected_revision');
    const row = await this.repository.softDelete(documentId, expected, actor);
    if (row) return documentFromRow(row);
    const state = await this.repository.findState(documentId);
    if (!state || state.deleted) throw notFound(documentId);
    throw conflict(documentId, state.revision, expected!);
  }

  /**
   * Without `revision`: brings a soft-deleted document back (an alive one is returned as it
   * is). With `revision`: makes that earlier version the current content.
   */
  async restore(
    documentId: string,
    revision: number | undefined,
    actor: string,
    access: Access,
  ): Promise<WriteResult> {
    validateDocumentId(documentId);
    await this.mayWrite('restore', documentId, actor, access);
    if (revision === undefined) {
      const row = await this.repository.undelete(documentId, actor);
      if (row) return { document: documentFromRow(row), changed: true };
      const alive = await this.repository.findAlive(documentId);
      if (!alive) throw notFound(documentId);
      return { document: documentFromRow(alive), changed: false };
    }
    this.fields.revision(revision, 'revision');
    const state = await this.repository.findState(documentId);
    if (!state) throw notFound(documentId);
    // The links of the version brought back are those of its body, read first (a snapshot
    // never changes, so the statement restores the very one they were read from).
    const snapshot = await this.repository.snapshot(documentId, revision);
    if (!snapshot) throw noSavedRevision(documentId, revision);
    const restored = await this.repository.restoreSnapshot(
      documentId,
      { id: snapshot.id, links: linkRowOf(documentId, snapshot.body) },
      actor,
    );
    if (!restored) throw noSavedRevision(documentId, revision);
    return { document: documentFromRow(restored.row), changed: restored.changed };
  }

  /**
   * Many writes in one call (the bulk route, the importer, sources): see {@link DocumentBulk}.
   */
  bulk(
    items: readonly BulkItem[],
    actor: string,
    access: Access,
    options: WriteOptions = {},
  ): Promise<BulkOutcome[]> {
    return this.bulkWrites.run(items, actor, access, options);
  }

  /**
   * Moves a document to the id `to`, keeping its revision, earlier versions and audit trail;
   * conditional on `expected_revision` when given. Needs a write grant on both ids. The new
   * id must be free: ALREADY_EXISTS when a document, alive or deleted (its history keeps the
   * id), holds it. The links it would break are written again in the same transaction
   * (LinkMoves), the moved document's own included.
   */
  async move(
    documentId: string,
    input: { to: string; expected_revision?: number },
    actor: string,
    access: Access,
  ): Promise<Document> {
    validateDocumentId(documentId);
    const to = validateDocumentId(input.to, 'to');
    if (to === documentId) throw invalidArgument('to', 'is the id the document already has');
    const expected = this.fields.revision(input.expected_revision, 'expected_revision');
    await this.mayWrite('move', documentId, actor, access);
    await this.mayWrite('move', to, actor, access);
    const { outcome: moved, rewroteMoved } = await this.linkMoves.moving(documentId, to, () =>
      this.repository.move(documentId, to, parentOf(to), expected, actor, linkRowOf),
    );
    switch (moved.kind) {
      case 'moved': {
        if (!rewroteMoved) return documentFromRow(moved.row);
        // Its own links were written again from its new folder: a revision after the move.
        const row = await this.repository.findAlive(to);
        return documentFromRow(row ?? moved.row);
      }
      case 'missing':
        throw notFound(documentId);
      case 'conflict':
        throw conflict(documentId, moved.revision, expected!);
      case 'taken':
        throw new DomainError(
          ErrorCode.ALREADY_EXISTS,
          `document ${to} already exists (or was deleted, and its history keeps the id); choose another id`,
          { document_id: to },
        );
    }
  }

  async history(
    documentId: string,
    query: { limit?: number; offset?: number },
    access: Access,
  ): Promise<HistoryResult> {
    validateDocumentId(documentId);
    const limit = query.limit ?? LIST_DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
      throw invalidArgument('limit', `must be an integer from 1 to ${LIST_MAX_LIMIT}`);
    }
    if (!Number.isInteger(offset) || offset < 0)
      throw invalidArgument('offset', 'must be an integer ≥ 0');
    const state = await this.repository.findState(documentId, access.readablePatterns() ?? null);
    if (!state) throw notFound(documentId, access);
    const rows = await this.repository.history(documentId, limit, offset);
    const more = rows.length > limit;
    return {
      document_id: documentId,
      current_revision: state.revision,
      deleted: state.deleted,
      items: rows.slice(0, limit).map(historyEntryFromRow),
      next_offset: more ? offset + limit : null,
    };
  }

  /** One earlier version whole (its snapshot), if the document is readable and has it. */
  async revision(documentId: string, revision: number, access: Access): Promise<Revision> {
    validateDocumentId(documentId);
    this.fields.revision(revision, 'revision');
    const state = await this.repository.findState(documentId, access.readablePatterns() ?? null);
    if (!state) throw notFound(documentId, access);
    const row = await this.repository.snapshot(documentId, revision);
    if (!row) throw noSavedRevision(documentId, revision);
    return revisionFromRow({ ...row, document_id: documentId });
  }

  private async applyChanges(
    documentId: string,
    changes: DocumentChanges,
    expected: number | undefined,
    actor: string,
    stamps: readonly string[],
  ): Promise<WriteResult> {
    const row = await this.repository.updateIfChanged(documentId, changes, expected, actor, stamps);
    if (row) return { document: documentFromRow(row), changed: true };
    // Nothing written: missing, a stale expectation, or nothing changed.
    const current = await this.repository.findAlive(documentId);
    if (!current) throw notFound(documentId);
    if (expected !== undefined && current.revision !== expected)
      throw conflict(documentId, current.revision, expected);
    return { document: documentFromRow(current), changed: false };
  }

  /** Titles of the alive documents among `ids` that `access` may read (others are absent). */
  async aliveTitles(ids: readonly string[], access: Access): Promise<Map<string, string>> {
    const rows = await this.repository.aliveTitles(
      [...new Set(ids)],
      access.readablePatterns() ?? null,
    );
    return new Map(rows.map((row) => [row.document_id, row.title]));
  }

  /**
   * Lets a write through when `access` may write the document; otherwise records the refusal
   * in the audit trail and refuses: PERMISSION_DENIED when it may read the document, else
   * exactly as if the document did not exist.
   */
  private async mayWrite(
    operation: RefusableOperation,
    documentId: string,
    actor: string,
    access: Access,
  ): Promise<void> {
    if (access.mayWrite(documentId)) {
      await this.sources.refuseIfOwned(documentId, access);
      return;
    }
    access.refused();
    await this.repository.recordRefusal(operation, documentId, actor);
    if (!access.mayRead(documentId)) throw notFound(documentId);
    throw new DomainError(
      ErrorCode.PERMISSION_DENIED,
      `you may read ${documentId} but not change it`,
      { document_id: documentId },
    );
  }

  /** Whether a row exists for the id, deleted or not. */
  async exists(documentId: string): Promise<boolean> {
    return (await this.repository.findState(documentId)) !== null;
  }
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    count++;
  return count;
}

/**
 * The answer for an absent document, and for one `access` may not read (counted as refused
 * there, never shown in the answer); with `sameName`, it names the readable document whose id
 * is this one in the other Unicode form.
 */
function notFound(
  documentId: string,
  access?: Access,
  sameName?: { id: string; form: 'NFC' | 'NFD' },
): DomainError {
  if (access !== undefined && !access.mayRead(documentId)) access.refused();
  if (sameName === undefined) {
    return new DomainError(ErrorCode.NOT_FOUND, `document ${documentId} does not exist`, {
      document_id: documentId,
    });
  }
  const written = sameName.form === 'NFC' ? 'composed (NFC)' : 'decomposed (NFD)';
  return new DomainError(
    ErrorCode.NOT_FOUND,
    `document ${documentId} does not exist; ${sameName.id}, the same name ${written}, does`,
    { document_id: documentId, same_name: sameName.id },
  );
}

function alreadyExists(documentId: string): DomainError {
  return new DomainError(
    ErrorCode.ALREADY_EXISTS,
    `document ${documentId} already exists; update it instead`,
    { document_id: documentId },
  );
}

function conflict(documentId: string, current: number, expected: number): DomainError {
  return new DomainError(
    ErrorCode.REVISION_CONFLICT,
    `document ${documentId} is at revision ${current}, not ${expected}; read it again and retry`,
    { document_id: documentId, current_revision: current, expected_revision: expected },
  );
}

/** NOT_FOUND for a revision the history does not hold (restore, read one revision). */
function noSavedRevision(documentId: string, revision: number): DomainError {
  return new DomainError(
    ErrorCode.NOT_FOUND,
    `document ${documentId} has no saved revision ${revision}`,
    { document_id: documentId, revision },
  );
}
