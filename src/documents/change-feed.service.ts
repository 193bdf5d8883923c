import { Injectable } from '@nestjs/common';
import { invalidArgument } from '../common/domain-error';
import { instantText, parseInstant } from '../common/iso-time';
import type { Access } from './access';
import { ChangeFeedRepository, type ChangeRow } from './change-feed.repository';
import {
  type Change,
  type ChangeFeed,
  CHANGES_DEFAULT_LIMIT,
  CHANGES_MAX_LIMIT,
} from './document.schemas';
import { prefixUpperBound, validateFolder, validatePrefix } from './document-id';
import { AUDITED_OPERATIONS } from './write-operations';

/** The feed's filters as the route takes them: text, an empty value being no filter. */
export interface ChangeQuery {
  folder?: string;
  actor?: string;
  operation?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

/**
 * The change feed (docs/documents.md): the audit trail, newest first by id, a keyset page at
 * a time, filtered by folder, actor, operation and time, and only the rows whose document id
 * the caller may read (refused attempts included: they name the document they aimed at).
 */
@Injectable()
export class ChangeFeedService {
  constructor(private readonly feed: ChangeFeedRepository) {}

  async changes(query: ChangeQuery, access: Access): Promise<ChangeFeed> {
    const folder = validateFolder(query.folder, 'folder');
    const actor = validatePrefix(query.actor, 'actor') || null;
    const operation = query.operation || null;
    if (operation !== null && !AUDITED_OPERATIONS.includes(operation)) {
      throw invalidArgument('operation', `must be one of ${AUDITED_OPERATIONS.join(', ')}`);
    }
    const since = instantOf(query.since, 'since');
    const until = instantOf(query.until, 'until');
    if (since !== undefined && until !== undefined && since >= until) {
      throw invalidArgument('until', 'must be later than since');
    }
    const limit = query.limit ?? CHANGES_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > CHANGES_MAX_LIMIT) {
      throw invalidArgument(
        'limit',
        `must be an integer from 1 to ${CHANGES_MAX_LIMIT}, got ${limit}`,
      );
    }
    const before = query.cursor ? decodeCursor(query.cursor) : null;

    // The folder narrowed to what may be read: an index range, the condition on top.
    const scope = access.scopeUnder(folder);
    if (scope === undefined) return { changes: [], next_cursor: null };
    const rows = await this.feed.page(
      {
        from: scope.prefix || null,
        to: scope.prefix ? prefixUpperBound(scope.prefix) : null,
        actor,
        operation,
        since: since === undefined ? null : instantText(since),
        until: until === undefined ? null : instantText(until),
        before,
      },
      limit + 1,
      scope.readable,
    );
    const changes = rows.slice(0, limit).map(changeFromRow);
    return {
      changes,
      next_cursor: rows.length > limit ? encodeCursor(changes[changes.length - 1].id) : null,
    };
  }
}

function changeFromRow(row: ChangeRow): Change {
  return { ...row, id: Number(row.id), at: row.at.toISOString() };
}

function instantOf(value: string | undefined, field: string): bigint | undefined {
  if (!value) return undefined;
  const instant = parseInstant(value);
  if (instant === undefined) {
    throw invalidArgument(
      field,
      `must be an ISO 8601 time with its offset, such as 2026-11-27T10:00:00Z, got ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return instant;
}

/**
 * A cursor is the id of the last row of a page behind a version tag, base64url-encoded:
 * opaque to clients, and a keyset position (the next page holds the rows below it), so
 * rows written meanwhile shift nothing.
 */
function encodeCursor(id: number | string): string {
  return Buffer.from(`a1.${id}`, 'utf8').toString('base64url');
}

/** The id a cursor of {@link encodeCursor} holds, as decimal text. */
function decodeCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,40}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const id = /^a1\.([1-9]\d{0,18})$/.exec(text)?.[1];
  if (id === undefined || BigInt(id) > 2n ** 63n - 1n || encodeCursor(id) !== cursor) {
    throw invalidArgument('cursor', 'is not one this server issued; start again without it');
  }
  return id;
}
