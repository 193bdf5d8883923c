import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The hash a Hugging Face hub (or a mirror of it) announces for a file, in the headers of its
 * answer to a HEAD, as huggingface_hub reads it: an LFS file's SHA-256 in `X-Linked-Etag` (on
 * the redirect to the CDN, whose own ETag is no hash of the content), else the `ETag` of the
 * answer: a git blob's SHA-1 for a file kept in git (sha1 of "blob <size>\0" and the bytes).
 */
export interface AnnouncedDigest {
  readonly algorithm: 'sha256' | 'sha1';
  /** Lower-case hex. */
  readonly value: string;
}

/** What a HEAD announces of a file: its hash and its size, when it says them. */
export interface Announcement {
  readonly digest?: AnnouncedDigest;
  readonly size?: number;
}

/** The hashes of a file that an announced digest may be. */
export interface FileHashes {
  readonly bytes: number;
  readonly sha256: string;
  /** The git blob's SHA-1, what the hub announces for a file kept in git. */
  readonly gitSha1: string;
  /** The content's SHA-1: what Artifactory gives as the ETag of a file it serves. */
  readonly sha1: string;
}

/** The hash an entity tag carries (weak or strong, quoted or not); `undefined` when none. */
export function digestOfEtag(etag: string | undefined): AnnouncedDigest | undefined {
  if (etag === undefined) return undefined;
  const value = etag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1')
    .toLowerCase();
  if (/^[0-9a-f]{64}$/.test(value)) return { algorithm: 'sha256', value };
  if (/^[0-9a-f]{40}$/.test(value)) return { algorithm: 'sha1', value };
  // An MD5 (S3), a multipart tag, a server's own token: nothing the content can be checked by.
  return undefined;
}

/**
 * What the answers to one HEAD (`chain`, first to last, redirects included) announce: the
 * linked hash and size wherever the hub put them (on its redirect to the CDN), else the
 * last answer's `ETag` and `Content-Length`.
 */
export function announcementOf(chain: readonly IncomingHttpHeaders[]): Announcement {
  const last = chain[chain.length - 1] ?? {};
  const linked = chain.find((headers) => headers['x-linked-etag'] !== undefined);
  const digest = linked
    ? digestOfEtag(one(linked['x-linked-etag']))
    : digestOfEtag(one(last['etag']));
  const sizeHeader =
    one(chain.find((headers) => headers['x-linked-size'] !== undefined)?.['x-linked-size']) ??
    one(last['content-length']);
  const size =
    sizeHeader !== undefined && /^\d{1,15}$/.test(sizeHeader.trim())
      ? Number(sizeHeader)
      : undefined;
  return { ...(digest ? { digest } : {}), ...(size !== undefined ? { size } : {}) };
}

/** Whether a file whose hashes are `hashes` is the one `digest` announces. */
export function matchesDigest(digest: AnnouncedDigest, hashes: FileHashes): boolean {
  return digest.algorithm === 'sha256'
    ? hashes.sha256 === digest.value
    : hashes.gitSha1 === digest.value || hashes.sha1 === digest.value;
}

/** How messages name an algorithm. */
export function digestName(digest: AnnouncedDigest): string {
  return digest.algorithm === 'sha256' ? 'SHA-256' : 'SHA-1';
}

/** The hashes of the file at `path`, read once. */
export async function fileHashes(path: string): Promise<FileHashes> {
  const { size } = await stat(path);
  const sha256 = createHash('sha256');
  const sha1 = createHash('sha1');
  const gitSha1 = createHash('sha1').update(`blob ${size}\0`);
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    const data = chunk as Buffer;
    sha256.update(data);
    sha1.update(data);
    gitSha1.update(data);
    bytes += data.length;
  }
  return {
    bytes,
    sha256: sha256.digest('hex'),
    gitSha1: gitSha1.digest('hex'),
    sha1: sha1.digest('hex'),
  };
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
