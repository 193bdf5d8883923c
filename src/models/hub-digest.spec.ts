import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  announcementOf,
  digestOfEtag,
  fileHashes,
  matchesDigest,
  type FileHashes,
} from './hub-digest';

const SHA256 = 'a'.repeat(64);
const SHA1 = 'b'.repeat(40);

describe('digestOfEtag: the hash an entity tag carries', () => {
  it.each([
    [`"${SHA256}"`, { algorithm: 'sha256', value: SHA256 }],
    [`W/"${SHA1}"`, { algorithm: 'sha1', value: SHA1 }],
    [SHA256.toUpperCase(), { algorithm: 'sha256', value: SHA256 }],
    [` "${SHA1}" `, { algorithm: 'sha1', value: SHA1 }],
    ['"d41d8cd98f00b204e9800998ecf8427e"', undefined], // an MD5: a CDN's, no hash of ours
    ['"d41d8cd98f00b204e9800998ecf8427e-12"', undefined], // S3 multipart
    ['"abc"', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j → %j', (etag, digest) => {
    expect(digestOfEtag(etag)).toEqual(digest);
  });
});

describe('announcementOf: what the answers to a HEAD announce', () => {
  it('takes the linked hash and size of the hub redirect, not the CDN ETag', () => {
    expect(
      announcementOf([
        { 'x-linked-etag': `"${SHA256}"`, 'x-linked-size': '34014426', etag: `"${SHA1}"` },
        { etag: '"d41d8cd98f00b204e9800998ecf8427e"', 'content-length': '34014426' },
      ]),
    ).toEqual({ digest: { algorithm: 'sha256', value: SHA256 }, size: 34_014_426 });
  });

  it("takes a file kept in git by its answer's ETag and length", () => {
    expect(announcementOf([{ etag: `"${SHA1}"`, 'content-length': '711396' }])).toEqual({
      digest: { algorithm: 'sha1', value: SHA1 },
      size: 711_396,
    });
  });

  it('announces nothing it cannot read', () => {
    expect(announcementOf([{ etag: 'W/"xyz"', 'content-length': '-1' }])).toEqual({});
    expect(announcementOf([{ 'content-length': '12e3' }])).toEqual({});
    expect(announcementOf([])).toEqual({});
  });
});

describe('fileHashes and matchesDigest', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'hub-digest-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives a file's SHA-256, its SHA-1 and its git blob SHA-1 (what `git hash-object` prints)", async () => {
    const path = join(dir, 'hello');
    writeFileSync(path, 'hello\n');
    const hashes = await fileHashes(path);
    expect(hashes).toEqual({
      bytes: 6,
      sha256: createHash('sha256').update('hello\n').digest('hex'),
      sha1: 'f572d396fae9206628714fb2ce00f72e94f2258f',
      gitSha1: 'ce013625030ba8dba906f756967f9e9ca394464a',
    });
  });

  it('matches a SHA-256 by the SHA-256, a SHA-1 by the git blob or the content', () => {
    const hashes: FileHashes = { bytes: 1, sha256: SHA256, sha1: SHA1, gitSha1: 'c'.repeat(40) };
    expect(matchesDigest({ algorithm: 'sha256', value: SHA256 }, hashes)).toBe(true);
    expect(matchesDigest({ algorithm: 'sha256', value: 'd'.repeat(64) }, hashes)).toBe(false);
    expect(matchesDigest({ algorithm: 'sha1', value: SHA1 }, hashes)).toBe(true);
    expect(matchesDigest({ algorithm: 'sha1', value: 'c'.repeat(40) }, hashes)).toBe(true);
    expect(matchesDigest({ algorithm: 'sha1', value: 'e'.repeat(40) }, hashes)).toBe(false);
  });
});
