import {
  EXTENSION_ID,
  getUiCapability,
  RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps/server';
import { randomUUID } from 'node:crypto';

/**
 * Whether a client's capabilities say it is an MCP Apps host: it declares the
 * `io.modelcontextprotocol/ui` extension with the HTML profile among its MIME types. The
 * extension belongs in `extensions` (2025-11-25 and 2026-07-28); a 2025 client whose SDK
 * has no `extensions` yet may put it in `experimental`, which is read the same way.
 */
export function declaresApps(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const { extensions, experimental } = capabilities as {
    extensions?: Record<string, unknown>;
    experimental?: Record<string, unknown>;
  };
  const found =
    getUiCapability({ extensions: objectOrUndefined(extensions) }) ??
    getUiCapability({ extensions: objectOrUndefined(experimental) });
  return Array.isArray(found?.mimeTypes) && found.mimeTypes.includes(RESOURCE_MIME_TYPE);
}

function objectOrUndefined(value: unknown): Record<string, object> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, object>)
    : undefined;
}

/** What the server adds to its capabilities for an Apps host (and only for one). */
export const APPS_SERVER_EXTENSION = Object.freeze({
  [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] },
});

/**
 * The 2025 era over HTTP keeps nothing per connection, yet its client declares capabilities
 * once, in `initialize`. So the answer to an Apps host's `initialize` carries an
 * `Mcp-Session-Id` that itself says "Apps host": every replica reads it from the header of
 * the later requests, and nothing is stored. The id grants nothing (the views and their
 * metadata are the same for every caller; documents stay behind the access policy), so a
 * client that forges one only gets the views it could have asked for.
 */
const APPS_SESSION_PREFIX = 'apps-';

export function appsSessionId(): string {
  return `${APPS_SESSION_PREFIX}${randomUUID()}`;
}

export function isAppsSession(header: string | string[] | undefined): boolean {
  return typeof header === 'string' && header.startsWith(APPS_SESSION_PREFIX);
}
