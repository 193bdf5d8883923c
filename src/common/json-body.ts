import {
  BadRequestException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/** Marks a request whose body has been read, so it is never read twice. */
const BODY_READ = Symbol('bodyRead');

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
    request.resume();
    throw new PayloadTooLargeException(`request body is ${declared} bytes, the limit is ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      request.resume();
      throw new PayloadTooLargeException(`request body is over the limit of ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  if (size === 0) return (flagged.body = undefined);
  if (!isJsonContentType(request.headers['content-type'])) {
    throw new UnsupportedMediaTypeException(
      `Content-Type must be application/json, got ${request.headers['content-type'] ?? 'none'}`,
    );
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return (flagged.body = JSON.parse(text));
  } catch (error) {
    throw new BadRequestException(`malformed JSON body: ${(error as Error).message}`);
  }
}
