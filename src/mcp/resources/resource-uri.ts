import { invalidArgument } from '../../common/domain-error';
import { validateDocumentId } from '../../documents/document-id';

/** The scheme of the knowledge base's resources: `kb://<document_id>`. */
export const KB_SCHEME = 'kb://';

/** RFC 6570 templates of the two resource kinds (`{+var}`: reserved expansion keeps "/"). */
export const DOCUMENT_TEMPLATE = 'kb://{+document_id}';
export const FOLDER_TEMPLATE = 'kb://{+folder}/';

/** What a `kb://` URI names. */
export type ResourceTarget =
  | { readonly kind: 'document'; readonly documentId: string }
  /** A folder: the documents whose id starts with `folder/`. */
  | { readonly kind: 'folder'; readonly folder: string };

/**
 * Characters kept as they are in a resource URI: RFC 3986 unreserved and sub-delims, ":",
 * "@" and "/". Everything else ("%", "?", "#", spaces, non-ASCII) is percent-encoded as
 * UTF-8, so that every id has exactly one URI and the URI is valid.
 */
const KEPT = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
const ALL_KEPT = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;

function encode(path: string): string {
  if (ALL_KEPT.test(path)) return path;
  let out = '';
  for (const char of path) {
    out += KEPT.test(char)
      ? char
      : [...Buffer.from(char, 'utf8')]
          .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
          .join('');
  }
  return out;
}

/** The URI of a document: `kb://knowledge/a b.md` → `kb://knowledge/a%20b.md`. */
export function documentUri(documentId: string): string {
  return KB_SCHEME + encode(documentId);
}

/** The URI of a folder (an id prefix, without its trailing "/"): `kb://knowledge/reports/`. */
export function folderUri(folder: string): string {
  return `${KB_SCHEME}${encode(folder)}/`;
}

/**
 * What a `kb://` URI names: everything after the scheme, percent-decoded, is a document id,
 * or a folder when it ends with "/". A literal "?" or "#" is part of the id (a template's
 * reserved expansion leaves them unencoded). Throws INVALID_ARGUMENT naming the problem.
 */
export function parseResourceUri(uri: string): ResourceTarget {
  if (uri.slice(0, KB_SCHEME.length).toLowerCase() !== KB_SCHEME) {
    throw invalidArgument('uri', 'must be a kb:// URI such as kb://knowledge/topic/page.md');
  }
  let path: string;
  try {
    path = decodeURIComponent(uri.slice(KB_SCHEME.length));
  } catch {
    throw invalidArgument('uri', 'holds a malformed percent-encoding');
  }
  if (!path.endsWith('/')) {
    return { kind: 'document', documentId: validateDocumentId(path, 'uri') };
  }
  const folder = path.slice(0, -1);
  if (folder === '') {
    throw invalidArgument(
      'uri',
      'names no folder: a folder URI is kb://<folder>/, e.g. kb://knowledge/',
    );
  }
  return { kind: 'folder', folder: validateDocumentId(folder, 'uri') };
}
