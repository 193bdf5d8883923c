import type { IncomingMessage } from 'node:http';
import { BodyRefused, BodyUnreadable, readBody } from '../common/json-body';
import { McpHttpException } from './json-rpc-error';

/** A parsed MCP POST body, or why it is not JSON (answered as JSON-RPC -32700). */
export type McpBody =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

/**
 * Reads the body of an MCP POST with the common reader (common/json-body.ts). MCP routes
 * read their own body (the REST body parser is bound to /documents only) so that every
 * refusal is a JSON-RPC envelope: 415 when `Content-Type` is not `application/json`
 * (checked before reading anything), 413 past `limit` bytes. A byte-order mark is dropped.
 * A body that is empty or not JSON resolves `{ ok: false }`: the caller answers -32700,
 * framed like any other JSON-RPC answer.
 */
export async function readMcpBody(request: IncomingMessage, limit: number): Promise<McpBody> {
  try {
    const body = await readBody(request, {
      limit,
      jsonSuffix: false,
      typeFirst: true,
      stripBom: true,
      closeOnOversize: false,
    });
    if (body.kind === 'json') return { ok: true, value: body.value };
    if (body.kind === 'malformed' && !body.blank) return { ok: false, problem: body.problem };
    return { ok: false, problem: 'the request body is empty' };
  } catch (error) {
    if (error instanceof BodyUnreadable)
      throw new McpHttpException(400, `Bad Request: ${error.message}`);
    if (!(error instanceof BodyRefused)) throw error;
    if (error.status === 413) {
      throw new McpHttpException(
        413,
        `Payload Too Large: the request body must not exceed ${limit} bytes`,
      );
    }
    const contentType = request.headers['content-type'];
    throw new McpHttpException(
      415,
      `Unsupported Media Type: Content-Type must be application/json, got ${contentType === undefined ? 'none' : JSON.stringify(contentType.slice(0, 100))}`,
    );
  }
}
