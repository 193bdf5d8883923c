import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION as LATEST_LEGACY_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders } from 'node:http';
import { McpHttpException } from './json-rpc-error';

/**
 * The stateless revisions (docs/mcp.md): version, capabilities and client identity travel in
 * every request's `_meta`, and there is no `initialize`. SDK 2.4 keeps its list of them
 * internal, so it is written out here.
 */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/**
 * The `initialize`-based revisions (docs/mcp.md), newest first. Not the SDK's list: SDK 1.32
 * also names `2024-10-07`, a draft that never became a published revision, which this
 * server does not support. The newest comes from the SDK.
 */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_LEGACY_PROTOCOL_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
];

/** Every revision this server speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  ...MODERN_PROTOCOL_VERSIONS,
  ...LEGACY_PROTOCOL_VERSIONS,
];

export const LATEST_PROTOCOL_VERSION = MODERN_PROTOCOL_VERSIONS[0];

/** What a request without an `MCP-Protocol-Version` header speaks (the 2025-06-18 rule). */
export const DEFAULT_PROTOCOL_VERSION: string = DEFAULT_NEGOTIATED_PROTOCOL_VERSION;

/**
 * Whether `version` names a revision of the stateless era: one this server speaks, or a
 * later date (a client from the future gets the 2026 era's "unsupported version" answer,
 * which lists what it can retry with). Anything else (`1.0`, `2024-10-07`) is legacy.
 */
export function isModernVersion(version: string): boolean {
  return (
    MODERN_PROTOCOL_VERSIONS.includes(version) ||
    (/^\d{4}-\d{2}-\d{2}$/.test(version) && version > MODERN_PROTOCOL_VERSIONS[0])
  );
}

/**
 * The protocol version of one legacy-era HTTP request: its `MCP-Protocol-Version` header,
 * or {@link DEFAULT_PROTOCOL_VERSION} when absent. Decided per request, never per
 * connection. Throws 400 listing the supported versions when the header names one this
 * server does not speak.
 */
export function requestProtocolVersion(headers: IncomingHttpHeaders): string {
  const raw = headers['mcp-protocol-version'];
  if (raw === undefined) return DEFAULT_PROTOCOL_VERSION;
  const value = (Array.isArray(raw) ? raw.join(', ') : raw).trim();
  if (LEGACY_PROTOCOL_VERSIONS.includes(value)) return value;
  throw new McpHttpException(
    400,
    `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(value.slice(0, 64))} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
  );
}

/**
 * The version an `initialize` answers: the client's when it is a handshake revision this
 * server speaks, else the newest handshake revision (`initialize` does not exist in the
 * stateless era, so it never answers 2026-07-28).
 */
export function negotiateProtocolVersion(requested: string): string {
  return LEGACY_PROTOCOL_VERSIONS.includes(requested) ? requested : LEGACY_PROTOCOL_VERSIONS[0];
}

/** Whether a legacy-era request may carry `resource_link` content (defined from 2025-06-18). */
export function supportsResourceLinks(protocolVersion: string): boolean {
  return protocolVersion >= '2025-06-18';
}
