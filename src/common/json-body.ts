import {
  BadRequestException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The one reader of JSON request bodies, for REST and MCP alike: the size limit (on
 * `Content-Length` first, then while reading), the media type, a byte-order mark, an empty
 * body and malformed JSON. Each edge words the refusals its own way (REST errors here in
 * {@link readJsonBody}, JSON-RPC envelopes in transport/mcp-body.ts) and says which
 * differences it wants through {@link JsonBodyOptions}.
 */
export interface JsonBodyOptions {
  /** Largest body in bytes. */
  readonly limit: number;
  /** Accept `application/*+json` media types as well as `application/json`. */
  readonly jsonSuffix: boolean;
  /**
   * Check the media type before reading anything, even for an empty body (MCP: a POST
   * always carries a message); otherwise only a body that is there must be JSON.
   */
  readonly typeFirst: boolean;
  /** Drop a UTF-8 byte-order mark before parsing. */
  readonly stripBom: boolean;
  /** Close the connection after refusing an oversized body (so its rest is never read). */
  readonly closeOnOversize: boolean;
}

/** What the body was: JSON, nothing, or not JSON (and why). */
export type JsonBody =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'empty' }
  | {
      readonly kind: 'malformed';
      readonly problem: string;
      /** Nothing but white space (or a byte-order mark) was sent. */
      readonly blank: boolean;
    };

/** A body refused before parsing: 413 (too large) or 415 (not declared as JSON). */
export class BodyRefused extends Error {
  constructor(
    readonly status: 413 | 415,
    /** 413: the declared size when the refusal came from `Content-Length`. */
    readonly declaredBytes?: number,
  ) {
    super(status === 413 ? 'request body too large' : 'request body is not JSON');
    this.name = 'BodyRefused';
  }
}

/**
 * The body could not be read to its end: the client's connection broke mid-body (a malformed
 * chunk, a reset). Its own class, without the socket error's code: an ECONNRESET of a client
 * is not the database's.
 */
export class BodyUnreadable extends Error {
  constructor(cause: Error) {
    super(`the request body could not be read to its end (${cause.message})`);
    this.name = 'BodyUnreadable';
  }
}

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

export function isJsonContentType(contentType: string | undefined, jsonSuffix = true): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/json' || (jsonSuffix && /^application\/[\w.+-]+\+json$/.test(type));
}

/** Reads and parses a request's JSON body; throws {@link BodyRefused} for 413 and 415. */
export async function readBody(
  request: IncomingMessage,
  options: JsonBodyOptions,
): Promise<JsonBody> {
  const declaredJson = isJsonContentType(request.headers['content-type'], options.jsonSuffix);
  if (options.typeFirst && !declaredJson) throw refuse(request, options, new BodyRefused(415));
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.limit) {
    throw refuse(request, options, new BodyRefused(413, declared));
  }
  const chunks = await readUpTo(request, options.limit);
  if (chunks === undefined) throw refuse(request, options, new BodyRefused(413));
  const size = chunks.reduce((total, chunk) => total + chunk.length, 0);
  if (size === 0) return { kind: 'empty' };
  if (!declaredJson) throw new BodyRefused(415);
  if (size >= LARGE_BODY_BYTES) await ownTurn();
  let text = Buffer.concat(chunks, size).toString('utf8');
  if (options.stripBom) text = text.replace(/^\uFEFF/, '');
  try {
    return { kind: 'json', value: JSON.parse(text) };
  } catch (error) {
    return { kind: 'malformed', problem: (error as Error).message, blank: text.trim() === '' };
  }
}

/** Marks a request whose body has been read, so it is never read twice. */
const BODY_READ = Symbol('bodyRead');

/**
 * A REST request's JSON body of at most `limit` bytes; `undefined` for an empty body.
 * Rejects with 413 past the limit, 415 for a body not declared as JSON (`application/json`
 * or `application/*+json`), 400 for malformed JSON. Read once: a second call answers the
 * first's value.
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const flagged = request as IncomingMessage & { [BODY_READ]?: boolean; body?: unknown };
  if (flagged[BODY_READ]) return flagged.body;
  flagged[BODY_READ] = true;
  let body: JsonBody;
  try {
    body = await readBody(request, {
      limit,
      jsonSuffix: true,
      typeFirst: false,
      stripBom: false,
      closeOnOversize: true,
    });
  } catch (error) {
    if (error instanceof BodyUnreadable) throw new BadRequestException(error.message);
    if (!(error instanceof BodyRefused)) throw error;
    if (error.status === 415) {
      throw new UnsupportedMediaTypeException(
        `Content-Type must be application/json, got ${request.headers['content-type'] ?? 'none'}`,
      );
    }
    throw new PayloadTooLargeException(
      error.declaredBytes === undefined
        ? `request body is over the limit of ${limit} bytes`
        : `request body is ${error.declaredBytes} bytes, the limit is ${limit}`,
    );
  }
  if (body.kind === 'malformed')
    throw new BadRequestException(`malformed JSON body: ${body.problem}`);
  return (flagged.body = body.kind === 'json' ? body.value : undefined);
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
    const onError = (error: Error) => settle(() => reject(new BodyUnreadable(error)));
    if (request.readableEnded) resolve(chunks);
    else request.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/**
 * Drops the unread rest of a refused body and, when asked, closes the connection once the
 * error is sent, so a client streaming without end cannot keep it busy (nor block a
 * graceful stop).
 */
function refuse(
  request: IncomingMessage,
  options: JsonBodyOptions,
  refusal: BodyRefused,
): BodyRefused {
  const response = (request as IncomingMessage & { res?: ServerResponse }).res;
  if (options.closeOnOversize && refusal.status === 413 && response && !response.headersSent) {
    response.setHeader('Connection', 'close');
  }
  request.resume();
  return refusal;
}
