import {
  BadRequestException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Marks a request whose body has been read, so it is never read twice. */
const BODY_READ = Symbol('bodyRead');

/** Bodies from this size on are parsed in a turn of the event loop of their own. */
const LARGE_BODY_BYTES = 64 * 1024;
let lastTurn: Promise<void> = Promise.resolve();

/**
 * Resolves in a turn of the event loop of its own, after every earlier caller's turn. Twenty
 * 1 MiB uploads that arrive together are then decoded, parsed and handled (hashing, the
 * INSERT) one per turn, some 10 ms each, with other requests answered in between, rather than
 * back to back while everything else waits 200 ms.
 */
function ownTurn(): Promise<void> {
  const turn = lastTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  lastTurn = turn;
  return turn;
}

export function isJsonContentType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type);
}

/**
 * Reads and parses a JSON request body of at most `limit` bytes. Resolves `undefined` for an
 * empty body. Rejects with 413 past the limit (checked on Content-Length first, then while
 * reading), 415 for a body that is not declared as JSON, 400 for malformed JSON.
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const flagged = request as IncomingMessage & { [BODY_READ]?: boolean; body?: unknown };
  if (flagged[BODY_READ]) return flagged.body;
  flagged[BODY_READ] = true;

  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    refuseRestOfBody(request);
    throw new PayloadTooLargeException(`request body is ${declared} bytes, the limit is ${limit}`);
  }
  const chunks = await readUpTo(request, limit);
  if (chunks === undefined) {
    refuseRestOfBody(request);
    throw new PayloadTooLargeException(`request body is over the limit of ${limit} bytes`);
  }
  const size = chunks.reduce((total, chunk) => total + chunk.length, 0);
  if (size === 0) return (flagged.body = undefined);
  if (!isJsonContentType(request.headers['content-type'])) {
    throw new UnsupportedMediaTypeException(
      `Content-Type must be application/json, got ${request.headers['content-type'] ?? 'none'}`,
    );
  }
  if (size >= LARGE_BODY_BYTES) await ownTurn();
  const text = Buffer.concat(chunks, size).toString('utf8');
  try {
    return (flagged.body = JSON.parse(text));
  } catch (error) {
    throw new BadRequestException(`malformed JSON body: ${(error as Error).message}`);
  }
}

/**
 * The body's chunks, or `undefined` as soon as it passes `limit` bytes. Listens to events
 * rather than iterating: an async iterator destroys the request when the loop is left early,
 * which leaves its connection open with no way to answer on it.
 */
function readUpTo(request: IncomingMessage, limit: number): Promise<Buffer[] | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      request.off('data', onData).off('end', onEnd).off('error', onError);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle(() => resolve(undefined));
      else chunks.push(chunk);
    };
    const onEnd = () => settle(() => resolve(chunks));
    const onError = (error: Error) => settle(() => reject(error));
    if (request.readableEnded) resolve(chunks);
    else request.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/**
 * Drops the unread rest of an oversized body and closes the connection once the error is
 * sent, so a client streaming without end cannot keep it busy (nor block a graceful stop).
 */
function refuseRestOfBody(request: IncomingMessage): void {
  const response = (request as IncomingMessage & { res?: ServerResponse }).res;
  if (response && !response.headersSent) response.setHeader('Connection', 'close');
  request.resume();
}
