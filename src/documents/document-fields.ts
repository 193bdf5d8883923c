import { createHash } from 'node:crypto';
import { DomainError, ErrorCode, invalidArgument } from '../common/domain-error';
import { LONE_SURROGATE, wellFormed } from '../common/well-formed';
import type { DocumentLimits } from '../config/app-config';
import type { Document } from './document.schemas';
import type { DocumentChanges, DocumentContent } from './documents.repository';

/** Largest revision (the column is a PostgreSQL `integer`). */
const MAX_REVISION = 2_147_483_647;

/** Deepest metadata nesting accepted (objects and arrays), far beyond any real use. */
export const MAX_METADATA_DEPTH = 64;

const CONTROL = /[\u0000-\u001f\u007f]/;

/** How a writer that copies documents from elsewhere (a source, an ingest) updates them. */
export interface WriteOptions {
  /**
   * Metadata keys that only stamp when the content was read, and at which version of the
   * original (`fetched_at`, a source's `source_version`). An update that differs from the
   * document in these alone changes nothing: no revision, no audit row, no notification, and
   * the document keeps the stamps of the reading that made its revision. With any other
   * change they are written along.
   */
  readonly stamps?: readonly string[];
}

/** The fields a write gives (their types already checked by the REST or MCP schema). */
export type FieldsInput = Partial<Pick<Document, 'body' | 'title' | 'tags' | 'metadata'>>;

/**
 * The rules of each field a write sets, in one place for every way in (REST, MCP, ingest):
 * the configured limits (a field over one is TOO_LARGE, naming the limit), no NUL or control
 * characters where PostgreSQL or readers would choke, tags trimmed and unique, metadata
 * bounded in depth before it is serialised. The shapes (a string, an array of strings) are
 * the edges' schemas' to check; the rules of revisions and conflicts are DocumentsService's.
 */
export class DocumentFields {
  constructor(private readonly limits: DocumentLimits) {}

  /** What a create stores: the fields checked, the title derived when not given, the hash. */
  content(documentId: string, input: FieldsInput & { body: string }): DocumentContent {
    const body = this.body(input.body);
    return {
      body,
      title: this.title(input.title) ?? deriveTitle(documentId, body, this.limits.maxTitleChars),
      tags: this.tags(input.tags) ?? [],
      metadata: this.metadata(input.metadata) ?? {},
      content_hash: contentHash(body),
    };
  }

  /** What an update changes: the fields given, checked (the body with its new hash). */
  changes(input: FieldsInput): DocumentChanges {
    const changes: DocumentChanges = {};
    if (input.body !== undefined) {
      changes.body = this.body(input.body);
      changes.content_hash = contentHash(changes.body);
    }
    if (input.title !== undefined) changes.title = this.title(input.title);
    if (input.tags !== undefined) changes.tags = this.tags(input.tags);
    if (input.metadata !== undefined) changes.metadata = this.metadata(input.metadata);
    return changes;
  }

  body(body: string): string {
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > this.limits.maxBodyBytes) {
      throw tooLarge('body', bytes, this.limits.maxBodyBytes, 'bytes');
    }
    if (body.includes('\u0000')) throw invalidArgument('body', 'must not contain NUL characters');
    // As PostgreSQL will hold it, so that what a write answers is what a read gives.
    return wellFormed(body);
  }

  title(title: string | undefined): string | undefined {
    if (title === undefined) return undefined;
    const chars = [...title].length;
    if (chars > this.limits.maxTitleChars) {
      throw tooLarge('title', chars, this.limits.maxTitleChars, 'characters');
    }
    if (CONTROL.test(title)) throw invalidArgument('title', 'must not contain control characters');
    return wellFormed(title.trim());
  }

  tags(tags: readonly string[] | undefined): string[] | undefined {
    if (tags === undefined) return undefined;
    if (tags.length > this.limits.maxTags) {
      throw tooLarge('tags', tags.length, this.limits.maxTags, 'tags');
    }
    const seen = new Set<string>();
    tags.forEach((tag, i) => {
      if (tag.trim() === '') throw invalidArgument(`tags[${i}]`, 'must be a non-empty string');
      if ([...tag].length > this.limits.maxTagChars) {
        throw invalidArgument(
          `tags[${i}]`,
          `must be at most ${this.limits.maxTagChars} characters`,
        );
      }
      if (CONTROL.test(tag)) {
        throw invalidArgument(`tags[${i}]`, 'must not contain control characters');
      }
      seen.add(wellFormed(tag.trim()));
    });
    return [...seen];
  }

  metadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (metadata === undefined) return undefined;
    // Checked before serialising: JSON.stringify of a deeply nested value overflows the stack.
    if (nestingDepth(metadata) > MAX_METADATA_DEPTH) {
      throw invalidArgument(
        'metadata',
        `must not be nested deeper than ${MAX_METADATA_DEPTH} levels`,
      );
    }
    let lone = false;
    const json = JSON.stringify(metadata, (key: string, value: unknown) => {
      if (LONE_SURROGATE.test(key) || (typeof value === 'string' && LONE_SURROGATE.test(value)))
        lone = true;
      return value;
    });
    // jsonb refuses the escape of a lone surrogate (`"\ud800"`): said here, not by SQL.
    if (lone) {
      throw invalidArgument('metadata', 'must be valid Unicode text (a lone surrogate)');
    }
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > this.limits.maxMetadataBytes) {
      throw tooLarge('metadata', bytes, this.limits.maxMetadataBytes, 'bytes of JSON');
    }
    // PostgreSQL's jsonb refuses \u0000 in strings; say so instead of failing in SQL.
    if (json.includes('\\u0000')) {
      throw invalidArgument('metadata', 'must not contain NUL characters');
    }
    return metadata;
  }

  /** A revision named by `field`: a positive integer the column can hold, or absent. */
  revision(revision: number | undefined, field: string): number | undefined {
    if (revision === undefined) return undefined;
    if (!Number.isInteger(revision) || revision < 1 || revision > MAX_REVISION) {
      throw invalidArgument(field, 'must be a positive integer');
    }
    return revision;
  }
}

/** SHA-256 of a body, hex: what `content_hash` holds. */
export function contentHash(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

/** The first markdown heading, else the id's last segment. */
function deriveTitle(documentId: string, body: string, maxChars: number): string {
  const heading = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m
    .exec(body)?.[1]
    ?.replace(/[\u0000-\u001f\u007f]/g, ' ')
    .trim();
  const title = heading || documentId.slice(documentId.lastIndexOf('/') + 1);
  return [...title].slice(0, maxChars).join('');
}

/** Levels of objects and arrays in `value`, counted without recursion. */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_METADATA_DEPTH) break;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

function tooLarge(field: string, actual: number, limit: number, unit: string): DomainError {
  return new DomainError(
    ErrorCode.TOO_LARGE,
    `${field} is ${actual} ${unit}, the limit is ${limit}`,
    {
      field,
      limit,
      actual,
    },
  );
}
