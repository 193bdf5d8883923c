import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import { PreparedStatements } from '../database/prepared-statements';
import type { Access } from './access';

/** Where a synced document came from (`kb_source_items`, written by src/sources/). */
export interface Provenance {
  readonly source_id: string;
  readonly source_uri: string;
}

/**
 * Which documents a source owns, for the writes and reads of the documents module: a document
 * a source wrote is read-only to every other writer, and a search hit names where it came
 * from. The sources module tells the folders sources own ({@link setMounts}); a document
 * outside them costs no query.
 */
@Injectable()
export class DocumentSources {
  private mounts: readonly string[] = [];

  constructor(private readonly statements: PreparedStatements) {}

  /** The folders sources own, as `mount/`. */
  setMounts(mounts: readonly string[]): void {
    this.mounts = mounts.map((mount) => `${mount}/`);
  }

  /**
   * The mounts read again from `kb_sources` now, rather than at the sources module's next
   * look (every 5 s): after a restore, whose sources own their documents at once.
   */
  async reloadMounts(): Promise<void> {
    const rows = await this.statements.query<{ mount: string }>(
      'kb_sources_mounts',
      `SELECT mount FROM kb_sources`,
      [],
    );
    this.setMounts(rows.map((row) => row.mount));
  }

  /** Whether a source may own the document (it lies under a mount). */
  underAMount(documentId: string): boolean {
    return this.mounts.some((mount) => documentId.startsWith(mount));
  }

  /**
   * Refuses a write of a document a source owns by anyone but that source's own run
   * (`Access.ofSource`), naming the source and where to edit the original.
   */
  async refuseIfOwned(documentId: string, access: Access): Promise<void> {
    // A source's run writes under its own mount only, and mounts never overlap: it owns
    // whatever it may touch there (its reconciliation leaves others' documents alone).
    if (access.source !== undefined || !this.underAMount(documentId)) return;
    const owner = (await this.provenance([documentId])).get(documentId);
    if (owner === undefined || access.source === owner.source_id) return;
    throw new DomainError(
      ErrorCode.PERMISSION_DENIED,
      `document ${documentId} is kept in sync by the source "${owner.source_id}" and is read-only here: edit it at ${owner.source_uri}`,
      { document_id: documentId, source_id: owner.source_id, source_uri: owner.source_uri },
    );
  }

  /** The provenance of those of `ids` a source owns. */
  async provenance(ids: readonly string[]): Promise<Map<string, Provenance>> {
    const owned = ids.filter((id) => this.underAMount(id));
    if (owned.length === 0) return new Map();
    // A prepared statement, so that within a write sent with an idempotency key it joins the
    // write's transaction rather than taking a second connection from the pool.
    const rows = await this.statements.query<Provenance & { document_id: string }>(
      'kb_source_items_provenance',
      `SELECT document_id, source_id, uri AS source_uri FROM kb_source_items
        WHERE document_id = ANY($1::text[])`,
      [owned],
    );
    return new Map(rows.map(({ document_id, ...provenance }) => [document_id, provenance]));
  }
}

/** The actor a source's writes are recorded under. */
export function sourceActor(sourceId: string): string {
  return `source:${sourceId}`;
}
