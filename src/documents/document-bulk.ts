import { DomainError, invalidArgument } from '../common/domain-error';
import { faultOf } from '../common/fault';
import type { Access } from './access';
import { parentOf, validateDocumentId } from './document-id';
import type { DocumentFields, FieldsInput, WriteOptions } from './document-fields';
import { documentFromRow } from './document-rows';
import type { Document } from './document.schemas';
import type { DocumentsRepository } from './documents.repository';
import { linkRowOf } from './links/link-row';
import type { RefusableOperation } from './write-operations';

/** One write of a bulk call. */
export type BulkItem = {
  op: 'create' | 'update' | 'delete';
  document_id: string;
  expected_revision?: number;
} & FieldsInput & { body?: string };

/** What one item of a bulk call did: the document written, or why it was refused. */
export interface BulkOutcome {
  document_id: string;
  document?: Document;
  created?: boolean;
  changed?: boolean;
  error?: DomainError;
}

/** The single writes a bulk call is made of, with their rules (DocumentsService). */
export interface SingleWrites {
  create(
    input: FieldsInput & Pick<Document, 'document_id' | 'body'>,
    actor: string,
    access: Access,
  ): Promise<Document>;
  update(
    documentId: string,
    input: FieldsInput & { expected_revision?: number },
    actor: string,
    access: Access,
    options: WriteOptions,
  ): Promise<{ document: Document; changed: boolean }>;
  delete(
    documentId: string,
    expectedRevision: number | undefined,
    actor: string,
    access: Access,
  ): Promise<Document>;
  /** Lets a write through, or records its refusal and throws it. */
  mayWrite(
    operation: RefusableOperation,
    documentId: string,
    actor: string,
    access: Access,
  ): Promise<void>;
  alreadyExists(documentId: string): DomainError;
}

/**
 * Many writes in one call (the bulk route, the importer, sources): each item is the single
 * write it names — create, update (conditional on `expected_revision` when given) or delete —
 * with the same validation, access, audit and compare-and-set; an item's refusal is its
 * result and the others go on. A database outage stops the call: the item it hit and those
 * not yet tried answer UNAVAILABLE, to be sent again. Its own file for what only bulk does:
 * the creates of ids named once are written in one statement.
 */
export class DocumentBulk {
  constructor(
    private readonly repository: DocumentsRepository,
    private readonly fields: DocumentFields,
    private readonly writes: SingleWrites,
  ) {}

  async run(
    items: readonly BulkItem[],
    actor: string,
    access: Access,
    options: WriteOptions,
  ): Promise<BulkOutcome[]> {
    const outcomes = new Array<BulkOutcome | undefined>(items.length);
    const seen = new Map<string, number>();
    for (const item of items) seen.set(item.document_id, (seen.get(item.document_id) ?? 0) + 1);
    // The creates of ids the request names once are one statement; the rest one by one, in order.
    const together = items.flatMap((item, i) =>
      item.op === 'create' && seen.get(item.document_id) === 1 ? [i] : [],
    );
    try {
      await this.createTogether(items, together, outcomes, actor, access);
      for (const [i, item] of items.entries()) {
        if (outcomes[i] !== undefined) continue;
        try {
          outcomes[i] = await this.item(item, actor, access, options);
        } catch (error) {
          if (!(error instanceof DomainError) || faultOf(error) !== undefined) throw error;
          outcomes[i] = { document_id: item.document_id, error };
        }
      }
    } catch (error) {
      const fault = faultOf(error);
      if (fault === undefined) throw error;
      items.forEach((item, i) => (outcomes[i] ??= { document_id: item.document_id, error: fault }));
    }
    return outcomes as BulkOutcome[];
  }

  /** The creates at `indexes`, validated one by one, written in one statement. */
  private async createTogether(
    items: readonly BulkItem[],
    indexes: readonly number[],
    outcomes: Array<BulkOutcome | undefined>,
    actor: string,
    access: Access,
  ): Promise<void> {
    const valid: Array<{
      i: number;
      documentId: string;
      content: ReturnType<DocumentFields['content']>;
    }> = [];
    for (const i of indexes) {
      const { document_id, body, title, tags, metadata } = items[i];
      try {
        validateDocumentId(document_id);
        if (body === undefined) throw invalidArgument('body', 'is required to create');
        const content = this.fields.content(document_id, { body, title, tags, metadata });
        await this.writes.mayWrite('create', document_id, actor, access);
        valid.push({ i, documentId: document_id, content });
      } catch (error) {
        if (!(error instanceof DomainError) || faultOf(error) !== undefined) throw error;
        outcomes[i] = { document_id, error };
      }
    }
    const written = new Map(
      (
        await this.repository.insertManyOrRevive(
          valid.map(({ documentId, content }) => ({
            documentId,
            parentId: parentOf(documentId),
            content,
            links: linkRowOf(documentId, content.body),
          })),
          actor,
        )
      ).map((row) => [row.document_id, row]),
    );
    for (const { i, documentId, content } of valid) {
      const row = written.get(documentId);
      outcomes[i] =
        row === undefined
          ? { document_id: documentId, error: this.writes.alreadyExists(documentId) }
          : {
              document_id: documentId,
              document: documentFromRow({ ...row, body: content.body }),
              created: true,
            };
    }
  }

  private async item(
    item: BulkItem,
    actor: string,
    access: Access,
    options: WriteOptions,
  ): Promise<BulkOutcome> {
    const { op, document_id, body, title, tags, metadata, expected_revision } = item;
    switch (op) {
      case 'create': {
        if (body === undefined) throw invalidArgument('body', 'is required to create');
        const document = await this.writes.create(
          { document_id, body, title, tags, metadata },
          actor,
          access,
        );
        return { document_id, document, created: true };
      }
      case 'update': {
        const { document, changed } = await this.writes.update(
          document_id,
          { body, title, tags, metadata, expected_revision },
          actor,
          access,
          options,
        );
        return { document_id, document, changed };
      }
      case 'delete': {
        const document = await this.writes.delete(document_id, expected_revision, actor, access);
        return { document_id, document };
      }
    }
  }
}
