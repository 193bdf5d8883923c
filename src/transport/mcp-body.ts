import type { IncomingMessage } from 'node:http';
import { McpHttpException } from './json-rpc-error';

/** A parsed MCP POST body, or why it is not JSON (answered as JSON-RPC -32700). */
export type McpBody =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

/** True for `application/json`, with or without parameters (`; charset=utf-8`). */
export function isJsonMediaType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0].trim().toLowerCase() === 'application/json';
}

/**
 * Reads the body of an MCP POST. MCP routes read their own body (the REST body parser is
 * bound to /documents only) so that every refusal is a JSON-RPC envelope:
 * 415 when `Content-Type` is not `application/json` (checked before reading anything),
 * 413 past `limit` bytes (on `Content-Length` first, then while reading).
 * A body that is empty or not JSON resolves `{ ok: false }`: the caller answers -32700,
 * framed like any other JSON-RPC answer.
 */
export async function readMcpBody(request: IncomingMessage, limit: number): Promise<McpBody> {
  const contentType = request.headers['content-type'];
  if (!isJsonMediaType(contentType)) {
    request.resume();
    throw new McpHttpException(
      415,
      `Unsupported Media Type: Content-Type must be application/json, got ${contentType === undefined ? 'none' : JSON.stringify(contentType.slice(0, 100))}`,
    );
  }
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    throw tooLarge(limit);
  }
  const { chunks, size } = await readAll(request, limit);
  const text = Buffer.concat(chunks, size)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (text.trim() === '') return { ok: false, problem: 'the request body is empty' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}

/** The whole body, or 413 as soon as more than `limit` bytes have arrived. */
function readAll(
  request: IncomingMessage,
  limit: number,
): Promise<{ chunks: Buffer[]; size: number }> {
  // Plain 'data' events: cheaper per request than an async iterator on this hot path.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.off('data', onData);
        request.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve({ chunks, size }));
    request.once('error', reject);
  });
}

function tooLarge(limit: number): McpHttpException {
  return new McpHttpException(
    413,
    `Payload Too Large: the request body must not exceed ${limit} bytes`,
  );
}
