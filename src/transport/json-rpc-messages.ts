import {
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  type JSONRPCNotification,
  type JSONRPCRequest,
  RELATED_TASK_META_KEY,
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
  if (isPlainRequest(value)) return { kind: 'request', message: value };
  const request = JSONRPCRequestSchema.safeParse(value);
  if (request.success) return { kind: 'request', message: request.data };
  const notification = JSONRPCNotificationSchema.safeParse(value);
  if (notification.success) return { kind: 'notification', message: notification.data };
  if (JSONRPCResultResponseSchema.safeParse(value).success) return { kind: 'response' };
  if (JSONRPCErrorResponseSchema.safeParse(value).success) return { kind: 'response' };
  return { kind: 'invalid', id: idOf(value), reason: `Invalid Request: ${whyInvalid(value)}` };
}

/**
 * The shape nearly every request has, recognised without zod: `jsonrpc` "2.0", a string or
 * safe-integer `id`, a string `method`, and nothing else but object `params`, whose `_meta`
 * (when present) is an object with no `progressToken` but a string or safe integer, and no
 * related-task entry. {@link JSONRPCRequestSchema} accepts all of these; anything else is
 * left to it, so what is accepted and refused does not change. The message is used as
 * parsed: the schema would copy it, and every method re-parses its params by its own schema.
 */
function isPlainRequest(value: unknown): value is JSONRPCRequest {
  if (!isObject(value) || value.jsonrpc !== '2.0' || typeof value.method !== 'string') {
    return false;
  }
  if (typeof value.id !== 'string' && !Number.isSafeInteger(value.id)) return false;
  const params = value.params;
  if (Object.keys(value).length !== (params === undefined ? 3 : 4)) return false;
  if (params === undefined) return true;
  // The schema drops an own `__proto__` (JSON.parse makes one from the text): left to it.
  if (!isObject(params) || Object.hasOwn(params, '__proto__')) return false;
  const meta = params._meta;
  if (meta === undefined) return !Object.hasOwn(params, '_meta');
  if (!isObject(meta) || Object.hasOwn(meta, '__proto__')) return false;
  if (Object.hasOwn(meta, RELATED_TASK_META_KEY)) return false;
  const token = meta.progressToken;
  return (
    !Object.hasOwn(meta, 'progressToken') ||
    typeof token === 'string' ||
    Number.isSafeInteger(token)
  );
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
