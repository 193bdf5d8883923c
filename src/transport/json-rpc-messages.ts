import {
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';

/** One message of a POST body, sorted by the SDK's JSON-RPC schemas. */
export type IncomingMessage =
  | { readonly kind: 'request'; readonly message: JSONRPCRequest }
  | { readonly kind: 'notification'; readonly message: JSONRPCNotification }
  /** The client answering a server request: accepted, nothing to answer. */
  | { readonly kind: 'response' }
  | { readonly kind: 'invalid'; readonly id: RequestId | null; readonly reason: string };

/** A POST body: one message, or a batch (a JSON array answered with an array). */
export type ParsedBody =
  | { readonly ok: true; readonly batch: boolean; readonly messages: readonly IncomingMessage[] }
  | { readonly ok: false; readonly reason: string };

/**
 * Sorts a parsed JSON body into JSON-RPC messages. `ok: false` is for bodies that cannot be
 * answered message by message: an empty batch, a batch over the SDK's limit, or an
 * `initialize` inside a batch (the 2025-03-26 lifecycle forbids it). An invalid message is
 * kept as `invalid`: alone it is answered 400 / -32600, inside a batch with its own -32600.
 */
export function parseBody(body: unknown): ParsedBody {
  if (!Array.isArray(body)) return { ok: true, batch: false, messages: [classify(body)] };
  if (body.length === 0) return { ok: false, reason: 'Invalid Request: empty batch' };
  if (body.length > MAX_BATCH_SIZE) {
    return {
      ok: false,
      reason: `Invalid Request: a batch must not exceed ${MAX_BATCH_SIZE} messages`,
    };
  }
  const messages = body.map(classify);
  if (messages.some((m) => m.kind === 'request' && m.message.method === 'initialize')) {
    return { ok: false, reason: 'Invalid Request: initialize must not be part of a batch' };
  }
  return { ok: true, batch: true, messages };
}

export function classify(value: unknown): IncomingMessage {
  const request = JSONRPCRequestSchema.safeParse(value);
  if (request.success) return { kind: 'request', message: request.data };
  const notification = JSONRPCNotificationSchema.safeParse(value);
  if (notification.success) return { kind: 'notification', message: notification.data };
  if (JSONRPCResultResponseSchema.safeParse(value).success) return { kind: 'response' };
  if (JSONRPCErrorResponseSchema.safeParse(value).success) return { kind: 'response' };
  return { kind: 'invalid', id: idOf(value), reason: `Invalid Request: ${whyInvalid(value)}` };
}

function idOf(value: unknown): RequestId | null {
  const id = isObject(value) ? value.id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

function whyInvalid(value: unknown): string {
  if (!isObject(value)) return 'a JSON-RPC message must be a JSON object';
  if (value.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (!('method' in value) && !('result' in value) && !('error' in value)) {
    return 'method is required';
  }
  if ('method' in value && typeof value.method !== 'string') return 'method must be a string';
  if ('id' in value && idOf(value) === null) return 'id must be a string or an integer';
  if ('params' in value && !isObject(value.params)) return 'params must be a JSON object';
  if (isObject(value.params) && '_meta' in value.params && !isObject(value.params._meta)) {
    return 'params._meta must be a JSON object';
  }
  return 'not a valid JSON-RPC 2.0 request, notification or response (unknown member?)';
}

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
