import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders } from 'node:http';
import { McpHttpException } from './json-rpc-error';

/**
 * Protocol revisions this server speaks (SPEC §6), newest first. Not the SDK's
 * `SUPPORTED_PROTOCOL_VERSIONS`: SDK 1.32 also lists `2024-10-07`, a draft that never
 * became a published revision and that the SPEC does not support. The newest and the
 * default come from the SDK, and agree with the SPEC.
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
];

/** What a request without an `MCP-Protocol-Version` header speaks (the 2025-06-18 rule). */
export const DEFAULT_PROTOCOL_VERSION: string = DEFAULT_NEGOTIATED_PROTOCOL_VERSION;

export { LATEST_PROTOCOL_VERSION };

/**
 * The protocol version of one HTTP request: its `MCP-Protocol-Version` header, or
 * {@link DEFAULT_PROTOCOL_VERSION} when absent. Decided per request, never per connection:
 * the 2026 revision drops sessions. Throws 400 listing the supported versions when the
 * header names one this server does not speak.
 */
export function requestProtocolVersion(headers: IncomingHttpHeaders): string {
  const raw = headers['mcp-protocol-version'];
  if (raw === undefined) return DEFAULT_PROTOCOL_VERSION;
  const value = (Array.isArray(raw) ? raw.join(', ') : raw).trim();
  if (SUPPORTED_PROTOCOL_VERSIONS.includes(value)) return value;
  throw new McpHttpException(
    400,
    `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(value.slice(0, 64))} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
  );
}

/** The version an `initialize` answers: the client's when supported, else the newest. */
export function negotiateProtocolVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
