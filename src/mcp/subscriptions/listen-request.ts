import { SubscriptionsListenRequestSchema } from '@modelcontextprotocol/core';
import { ErrorCode, type JSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import {
  HTTP_REFUSAL,
  jsonRpcError,
  type JsonRpcErrorEnvelope,
} from '../../transport/json-rpc-error';
import { RpcError } from '../rpc-error';
import type { ListenRefusal } from './change-subscriptions';
import { HonouredFilter, MAX_FILTER_URIS } from './subscription-filter';

/** The method that opens a listener (2026-07-28), on HTTP and on stdio. */
export const LISTEN_METHOD = 'subscriptions/listen';

/**
 * The honoured part of a `subscriptions/listen` request's filter; -32602 naming the problem
 * when its params are not a filter, or name more than {@link MAX_FILTER_URIS} URIs.
 */
export function listenFilter(request: JSONRPCRequest): HonouredFilter {
  const parsed = SubscriptionsListenRequestSchema.safeParse({
    method: request.method,
    params: request.params,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['params', ...issue.path.map(String)].join('.');
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${where}: ${issue.message}`);
  }
  const { notifications } = parsed.data.params;
  const uris = notifications.resourceSubscriptions ?? [];
  if (uris.length > MAX_FILTER_URIS) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Invalid params: params.notifications.resourceSubscriptions names ${uris.length} URIs, over the limit of ${MAX_FILTER_URIS}; follow a folder with kb://<folder>/ instead`,
    );
  }
  return HonouredFilter.of(notifications);
}

/** The answer to a listener refused by a limit or an outage, and its HTTP status. */
export function refusalAnswer(
  id: RequestId,
  refusal: ListenRefusal,
): { status: number; error: JsonRpcErrorEnvelope } {
  switch (refusal.kind) {
    case 'principal-limit':
      return {
        status: 429,
        error: jsonRpcError(
          id,
          HTTP_REFUSAL,
          `Too Many Requests: this principal already has ${refusal.limit} open listeners, the limit (MCP_LISTENERS_PER_PRINCIPAL); close one first`,
          { code: 'TOO_MANY_LISTENERS', limit: refusal.limit },
        ),
      };
    case 'total-limit':
      return {
        status: 429,
        error: jsonRpcError(
          id,
          HTTP_REFUSAL,
          `Too Many Requests: the server already has ${refusal.limit} open listeners, the limit (MCP_LISTENERS_MAX); retry later`,
          { code: 'TOO_MANY_LISTENERS', limit: refusal.limit },
        ),
      };
    case 'unavailable':
      return {
        status: 503,
        error: jsonRpcError(id, ErrorCode.InternalError, `Service unavailable: ${refusal.message}`),
      };
    default: {
      const unknown: never = refusal;
      throw new Error(`unknown refusal ${JSON.stringify(unknown)}`);
    }
  }
}
