import { closeSync, openSync, writeSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { drop, hubRequest, type HubAnswer, type HubSettings } from './hub-client';
import {
  announcementOf,
  fileHashes,
  matchesDigest,
  type Announcement,
  type FileHashes,
} from './hub-digest';
import { HubError } from './hub-failure';
import { MAX_MODEL_BYTES } from './model-source';

/**
 * One file of a model fetched from the hub into a partial file of MODELS_DIR/.partial,
 * resumable: what was received stays there, beside a note of what it is a part of (the URL,
 * the announced hash and size, the validator of the server's copy), and the next run asks
 * for the rest (`Range`, with `If-Range` so that a changed file comes whole instead).
 */

/** Where a partial file is, and its note. */
export interface PartialFile {
  readonly path: string;
  readonly note: string;
}

interface Note {
  readonly url: string;
  readonly digest?: Announcement['digest'];
  readonly size?: number;
  /** A strong ETag or a Last-Modified date of the copy the bytes came from. */
  readonly validator?: string;
}

/** The part file for `path` (as `model.onnx.part`). */
export function partialFile(path: string): PartialFile {
  return { path: `${path}.part`, note: `${path}.part.json` };
}

/**
 * What the hub announces of the file at `url`: a HEAD, its redirects followed. A HubError
 * when it is not there, not a file (a web page), empty, or larger than a model can be.
 */
export async function announce(url: URL, settings: HubSettings): Promise<Announcement> {
  const answer = await hubRequest(url, 'HEAD', {}, settings);
  drop(answer.body);
  // A server that does not answer HEAD: the GET gives the size, and nothing gives a hash.
  if (answer.status === 405 || answer.status === 501) return {};
  if (answer.status < 200 || answer.status > 299) {
    throw new HubError({ kind: 'status', status: answer.status });
  }
  if (isWebPage(answer.headers)) throw new HubError({ kind: 'web-page' });
  const announced = announcementOf(answer.chain);
  if (announced.size === 0) throw new HubError({ kind: 'empty' });
  if (announced.size !== undefined && announced.size > MAX_MODEL_BYTES) {
    throw new HubError({ kind: 'too-large', bytes: announced.size });
  }
  return announced;
}

/**
 * Brings the partial file of `url` to the whole file `announced` describes, resuming what an
 * earlier run received when it is a part of the same file. `progress` is told the bytes
 * there are and the total. Resolves with what this run received; a HubError when the
 * transfer fails (what was received is kept, except for a file that cannot be resumed).
 */
export async function download(
  url: URL,
  announced: Announcement,
  part: PartialFile,
  settings: HubSettings,
  progress?: (done: number, total: number | undefined) => void,
): Promise<{ received: number; resumed: number }> {
  let have = await resumable(url, announced, part);
  const resumed = have;
  if (have > 0 && have === announced.size) return { received: 0, resumed };
  // At most twice: a range the server cannot serve (416) or serves wrong starts afresh.
  for (let attempt = 1; ; attempt++) {
    const note = await readNote(part);
    const headers: Record<string, string> = {};
    if (have > 0) {
      headers.range = `bytes=${have}-`;
      if (note?.validator !== undefined) headers['if-range'] = note.validator;
    }
    const answer = await hubRequest(url, 'GET', headers, settings);
    const { status } = answer;
    let total: number | undefined;
    if (status === 416 || (status === 206 && rangeStart(answer.headers) !== have)) {
      drop(answer.body);
      // `bytes */N` where N is what we have: the file was whole already.
      if (status === 416 && completeLength(answer.headers) === have) {
        return { received: 0, resumed };
      }
      if (attempt === 2) throw new HubError({ kind: 'status', status });
      await discard(part);
      have = 0;
      continue;
    }
    if (status === 206) {
      total = completeLength(answer.headers);
    } else if (status === 200) {
      have = 0; // the whole file, again: the server ignored the range or the copy changed
      total = contentLength(answer.headers);
    } else {
      drop(answer.body);
      throw new HubError({ kind: 'status', status });
    }
    if (isWebPage(answer.headers)) {
      drop(answer.body);
      throw new HubError({ kind: 'web-page' });
    }
    const size = announced.size ?? total;
    if (announced.size !== undefined && total !== undefined && total !== announced.size) {
      drop(answer.body);
      throw new HubError({ kind: 'size-changed', announced: announced.size, sent: total });
    }
    if (size === 0) {
      drop(answer.body);
      throw new HubError({ kind: 'empty' });
    }
    if (size !== undefined && size > MAX_MODEL_BYTES) {
      drop(answer.body);
      throw new HubError({ kind: 'too-large', bytes: size });
    }
    await writeNote(part, {
      url: url.href,
      ...(announced.digest ? { digest: announced.digest } : {}),
      ...(size !== undefined ? { size } : {}),
      ...validatorOf(answer.headers),
    });
    const received = await receive(answer, part, have, size, progress);
    return { received, resumed: have > 0 ? resumed : 0 };
  }
}

/** The disk's own failure to take the part file (full, read-only), named as such. */
function unwritable(part: PartialFile, error: unknown): Error {
  return new Error(`${part.path} cannot be written: ${(error as Error).message}`);
}

/** Appends the body to the part file from `have` on; resolves with the bytes received. */
async function receive(
  answer: HubAnswer,
  part: PartialFile,
  have: number,
  size: number | undefined,
  progress?: (done: number, total: number | undefined) => void,
): Promise<number> {
  let done = have;
  const bound = size ?? MAX_MODEL_BYTES;
  progress?.(done, size);
  // Each chunk is written as it comes, synchronously (a command, not a server): a stream of
  // the file would drop the chunks it still buffered when the connection is cut, and with
  // them what the next run could resume from.
  let fd: number;
  try {
    fd = openSync(part.path, have > 0 ? 'a' : 'w');
  } catch (error) {
    drop(answer.body);
    throw unwritable(part, error);
  }
  // The disk's own failure (full, read-only): named as such, not as a cut download.
  let diskError: Error | undefined;
  const file = new Writable({
    write(chunk: Buffer, _encoding, next) {
      if (done + chunk.length > bound) {
        next(
          new HubError(
            size === undefined
              ? { kind: 'too-large', bytes: done + chunk.length }
              : { kind: 'size-changed', announced: size, sent: done + chunk.length },
          ),
        );
        return;
      }
      try {
        for (let at = 0; at < chunk.length;) at += writeSync(fd, chunk, at);
      } catch (error) {
        diskError = unwritable(part, error);
        next(diskError);
        return;
      }
      done += chunk.length;
      progress?.(done, size);
      next();
    },
  });
  try {
    await pipeline(answer.body, file);
  } catch (error) {
    if (error instanceof HubError) throw error; // more bytes than the file has
    if (diskError) throw diskError;
    const kept = await stat(part.path).then(
      (s) => s.size,
      () => 0,
    );
    const why = answer.stopped();
    if (why === 'silent') throw new HubError({ kind: 'silent', host: answer.host, received: kept });
    if (why === 'interrupted') throw new HubError({ kind: 'interrupted', received: kept });
    throw new HubError({ kind: 'cut', received: kept });
  } finally {
    closeSync(fd);
  }
  if (size !== undefined && done < size) throw new HubError({ kind: 'cut', received: done });
  if (done === 0) {
    await discard(part);
    throw new HubError({ kind: 'empty' });
  }
  return done - have;
}

/**
 * Whether the whole file has the hash announced for it (none announced: its size only); the
 * part file is removed when not, since no resumption can mend it.
 */
export async function verify(part: PartialFile, announced: Announcement): Promise<FileHashes> {
  const hashes = await fileHashes(part.path);
  if (announced.digest !== undefined && !matchesDigest(announced.digest, hashes)) {
    await discard(part);
    throw new HubError({ kind: 'mismatch', digest: announced.digest });
  }
  return hashes;
}

/** Bytes of the part file worth resuming: a part of this very file; otherwise it is removed. */
async function resumable(url: URL, announced: Announcement, part: PartialFile): Promise<number> {
  const bytes = await stat(part.path).then(
    (s) => s.size,
    () => 0,
  );
  const note = await readNote(part);
  const same =
    note !== undefined &&
    note.url === url.href &&
    note.digest?.value === announced.digest?.value &&
    (announced.size === undefined || note.size === announced.size) &&
    (announced.size === undefined || bytes <= announced.size);
  if (bytes > 0 && same) return bytes;
  await discard(part);
  return 0;
}

export async function discard(part: PartialFile): Promise<void> {
  await rm(part.path, { force: true });
  await rm(part.note, { force: true });
}

async function readNote(part: PartialFile): Promise<Note | undefined> {
  try {
    const note = JSON.parse(await readFile(part.note, 'utf8')) as Note;
    return typeof note?.url === 'string' ? note : undefined;
  } catch {
    return undefined;
  }
}

/** The size the note of a part file gives its whole file, when it gives one. */
export async function readNoteSize(part: PartialFile): Promise<number | undefined> {
  const size = (await readNote(part))?.size;
  return typeof size === 'number' ? size : undefined;
}

async function writeNote(part: PartialFile, note: Note): Promise<void> {
  await writeFile(part.note, `${JSON.stringify(note)}\n`);
}

/** What `If-Range` may carry: a strong ETag, else the Last-Modified date. */
function validatorOf(headers: IncomingHttpHeaders): { validator?: string } {
  const etag = headers.etag;
  if (etag !== undefined && !etag.startsWith('W/')) return { validator: etag };
  const modified = headers['last-modified'];
  return modified !== undefined ? { validator: modified } : {};
}

function isWebPage(headers: IncomingHttpHeaders): boolean {
  return /^\s*text\/html\b/i.test(headers['content-type'] ?? '');
}

function contentLength(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['content-length'];
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** The first byte of a 206's `Content-Range: bytes FIRST-LAST/LENGTH`. */
function rangeStart(headers: IncomingHttpHeaders): number | undefined {
  const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(headers['content-range']?.trim() ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The LENGTH of `Content-Range: bytes …/LENGTH` (a 206's, or a 416's `bytes *\/LENGTH`). */
function completeLength(headers: IncomingHttpHeaders): number | undefined {
  const match = /^bytes (?:\d+-\d+|\*)\/(\d+)$/.exec(headers['content-range']?.trim() ?? '');
  return match ? Number(match[1]) : undefined;
}
