import { createHash } from 'node:crypto';

/**
 * Folder prefixes of a document id, each ending in `/`, plus the id itself as a folder:
 * `a/b/c.md` → `['a/', 'a/b/', 'a/b/c.md/']`. Stored with every point so that a search
 * limited to a folder is an exact-match filter (which every store can index), not a
 * string-prefix scan.
 */
export function ancestorsOf(documentId: string): string[] {
  const segments = documentId.split('/');
  const ancestors: string[] = [];
  for (let i = 1; i <= segments.length; i++) ancestors.push(`${segments.slice(0, i).join('/')}/`);
  return ancestors;
}

/**
 * The folder a search `prefix` means: whole path segments, with or without the trailing
 * `/` (`knowledge/reports` = `knowledge/reports/`). `undefined` for an empty prefix.
 */
export function folderOf(prefix: string | undefined): string | undefined {
  const trimmed = (prefix ?? '').replace(/\/+$/, '');
  return trimmed === '' ? undefined : `${trimmed}/`;
}

/**
 * Deterministic point id of a document's chunk: a UUID (version 5 layout) from SHA-256 of
 * the id and the chunk index, so that re-embedding overwrites the same points.
 */
export function pointId(documentId: string, chunkIndex: number): string {
  const bytes = createHash('sha256').update(`${documentId}\u0000${chunkIndex}`, 'utf8').digest();
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Little-endian float32 bytes of a vector (the PostgreSQL store's column format). */
export function encodeVector(vector: Float32Array): Buffer {
  const buffer = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buffer.writeFloatLE(vector[i], i * 4);
  return buffer;
}

const LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/**
 * The vectors' little-endian float32 bytes, end to end (the PostgreSQL store's column
 * format, one vector after another): on a little-endian machine a copy of their memory.
 */
export function encodeVectors(vectors: readonly Float32Array[]): Buffer {
  if (!LITTLE_ENDIAN) return Buffer.concat(vectors.map(encodeVector));
  return Buffer.concat(vectors.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)));
}

/** Inverse of {@link encodeVector}. */
export function decodeVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}
