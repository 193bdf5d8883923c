import { DomainError, ErrorCode, invalidArgument } from '../common/domain-error';
import { LONE_SURROGATE } from '../common/well-formed';

export const MAX_ID_BYTES = 512;

// C0 and C1 control characters, DEL, and the backslash.
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\]/;

/**
 * Checks a document id (docs/documents.md): 1–512 UTF-8 bytes, `/`-separated segments, no leading or
 * trailing `/`, no empty, `.` or `..` segment, no control character or backslash.
 * Returns the id unchanged; throws INVALID_ARGUMENT naming `field`.
 */
export function validateDocumentId(value: unknown, field = 'document_id'): string {
  if (typeof value !== 'string') throw invalidArgument(field, 'must be a string');
  if (value.length === 0) throw invalidArgument(field, 'must not be empty');
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_ID_BYTES) {
    throw new DomainError(
      ErrorCode.INVALID_ARGUMENT,
      `${field}: is ${bytes} bytes, the limit is ${MAX_ID_BYTES}`,
      {
        field,
        limit: MAX_ID_BYTES,
      },
    );
  }
  if (FORBIDDEN.test(value))
    throw invalidArgument(field, 'must not contain control characters or a backslash');
  // No UTF-8 form: PostgreSQL would store U+FFFD, and the id written would not be the id given.
  if (LONE_SURROGATE.test(value)) throw invalidArgument(field, 'must be valid Unicode text');
  if (value.startsWith('/') || value.endsWith('/'))
    throw invalidArgument(field, 'must not start or end with "/"');
  for (const segment of value.split('/')) {
    if (segment === '') throw invalidArgument(field, 'must not contain an empty segment ("//")');
    if (segment === '.' || segment === '..')
      throw invalidArgument(field, `must not contain a "${segment}" segment`);
  }
  return value;
}

/** The folder part of an id: `a/b/c.md` → `a/b`; a top-level id has none (`null`). */
export function parentOf(documentId: string): string | null {
  const slash = documentId.lastIndexOf('/');
  return slash === -1 ? null : documentId.slice(0, slash);
}

/** The folder of an id as the prefix of its documents' ids: `a/b/c.md` → `a/b/`; `''` at the top. */
export function folderPrefixOf(documentId: string): string {
  return documentId.slice(0, documentId.lastIndexOf('/') + 1);
}

/**
 * Checks a folder: the leading segments of document ids (the rules of an id), a trailing
 * `/` allowed. Returns the ids' prefix it stands for (`team-a` → `team-a/`, whole segments:
 * never `team-ab/x.md`), or `''` for the root (absent or empty).
 */
export function validateFolder(value: unknown, field: string): string {
  if (value === undefined || value === '') return '';
  const folder = typeof value === 'string' && value.endsWith('/') ? value.slice(0, -1) : value;
  return `${validateDocumentId(folder, field)}/`;
}

/** Checks a list prefix: any text up to 512 bytes without control characters. */
export function validatePrefix(value: unknown, field = 'prefix'): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalidArgument(field, 'must be a string');
  if (Buffer.byteLength(value, 'utf8') > MAX_ID_BYTES) {
    throw invalidArgument(field, `must be at most ${MAX_ID_BYTES} bytes`);
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value))
    throw invalidArgument(field, 'must not contain control characters');
  if (LONE_SURROGATE.test(value)) throw invalidArgument(field, 'must be valid Unicode text');
  return value;
}

/** Escapes LIKE's wildcards and its escape character, for `LIKE $1 || '%' ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The smallest string above every string that starts with `prefix`, in byte order of
 * UTF-8 (the order of code points): the prefix with its last code point incremented.
 * `[prefix, upper)` is then exactly the set of ids starting with `prefix`, a range an
 * index answers with parameters alone (no per-call planning). `null` when no such string
 * exists (a prefix of U+10FFFF only).
 */
export function prefixUpperBound(prefix: string): string | null {
  const codePoints = [...prefix];
  while (codePoints.length > 0) {
    const last = codePoints.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // Surrogates are not characters: the code point after U+D7FF is U+E000.
      return codePoints.join('') + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
    }
  }
  return null;
}
