import {
  ClientCapabilitiesSchema,
  ImplementationSchema,
  LoggingLevelSchema,
} from '@modelcontextprotocol/core';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/core/internal';
import { ErrorCode, type JSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { isObject, type IncomingMessage } from './json-rpc-messages';
import { jsonRpcError, type JsonRpcErrorEnvelope } from './json-rpc-error';
import {
  isModernVersion,
  LEGACY_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol-version';

/**
 * Error codes of the 2026-07-28 revision (its schema.ts). SDK 2.4 exports -32022 only from
 * `@modelcontextprotocol/server` and -32020 from nowhere, so they are named here.
 */
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

/** The per-request `_meta` fields of a 2026 request, checked. */
export interface ModernEnvelope {
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo?: z.infer<typeof ImplementationSchema>;
}

/** What a 2026-era POST body turned out to be, or why it is refused. */
export type ModernMessage =
  | {
      readonly kind: 'request';
      readonly request: JSONRPCRequest;
      readonly envelope: ModernEnvelope;
    }
  /** Accepted (202) and dropped: this revision defines no client notification over HTTP. */
  | { readonly kind: 'notification' }
  /** 400 with a JSON-RPC error carrying the request's id when it could be read. */
  | { readonly kind: 'refused'; readonly status: 400; readonly error: JsonRpcErrorEnvelope };

/** Methods whose `Mcp-Name` header mirrors a body field (2026-07-28, Standard Request Headers). */
const NAME_SOURCES: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/**
 * Whether a POST is served by the rules of the 2026-07-28 revision (docs/mcp.md): its
 * `MCP-Protocol-Version` header names a stateless-era revision, or its body carries the
 * per-request envelope (`_meta` with `io.modelcontextprotocol/protocolVersion`) naming
 * anything but a handshake revision. Everything else keeps the 2025 rules byte for byte.
 * Body-primary like the SDK's own classifier: a proxy that drops the header does not
 * change the era (the request is then refused for the missing header).
 */
export function isModernRequest(headers: IncomingHttpHeaders, body: unknown): boolean {
  const header = headerValue(headers['mcp-protocol-version']);
  if (header !== undefined && isModernVersion(header)) return true;
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = metaOf(message);
    if (meta === undefined || !Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY)) return false;
    const claim = meta[PROTOCOL_VERSION_META_KEY];
    return !(typeof claim === 'string' && LEGACY_PROTOCOL_VERSIONS.includes(claim));
  });
}

/**
 * Checks a 2026-era message against the revision's transport and envelope rules: the
 * version header present (-32020) and supported (-32022, listing the supported versions),
 * the required `_meta` fields (-32602), header and `_meta` agreeing (-32020), then
 * `Mcp-Method` and `Mcp-Name` against the body (-32020). Every refusal is HTTP 400 and
 * carries the request's id. Whether the method exists (404, -32601) is the dispatcher's
 * call.
 */
export function checkModernMessage(
  headers: IncomingHttpHeaders,
  message: IncomingMessage,
): ModernMessage {
  switch (message.kind) {
    case 'invalid':
      return refuse(message.id, ErrorCode.InvalidRequest, message.reason);
    case 'response':
      return refuse(
        null,
        ErrorCode.InvalidRequest,
        'Invalid Request: a client must not send JSON-RPC responses in the 2026-07-28 revision',
      );
    case 'notification': {
      const mismatch = methodHeaderMismatch(headers, message.message.method, false);
      return mismatch === undefined
        ? { kind: 'notification' }
        : refuse(null, HEADER_MISMATCH, mismatch);
    }
    case 'request':
      return checkRequest(headers, message.message);
    default: {
      const unknown: never = message;
      throw new Error(`unknown message ${JSON.stringify(unknown)}`);
    }
  }
}

/** The refusal of a JSON array body in the 2026 era, which carries one message per POST. */
export function batchRefusal(): ModernMessage {
  return refuse(
    null,
    ErrorCode.InvalidRequest,
    'Invalid Request: the 2026-07-28 revision sends one JSON-RPC message per POST, not a batch',
  );
}

/**
 * Checks a 2026-era request that travels without HTTP (stdio): the envelope's version
 * supported (-32022, listing the supported versions) and its required `_meta` fields
 * (-32602). There are no headers to mirror. Whether the method exists is the dispatcher's
 * call.
 */
export function checkUnframedRequest(request: JSONRPCRequest): ModernMessage {
  const claim = metaOf(request)?.[PROTOCOL_VERSION_META_KEY];
  if (typeof claim === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(claim)) {
    return unsupported(request.id, claim);
  }
  const envelope = checkEnvelope(metaOf(request));
  if (typeof envelope === 'string') return refuse(request.id, ErrorCode.InvalidParams, envelope);
  return { kind: 'request', request, envelope };
}

function checkRequest(headers: IncomingHttpHeaders, request: JSONRPCRequest): ModernMessage {
  const id = request.id;
  const header = headerValue(headers['mcp-protocol-version']);
  const meta = metaOf(request);
  const claim = meta?.[PROTOCOL_VERSION_META_KEY];
  if (header === undefined) {
    return refuse(
      id,
      HEADER_MISMATCH,
      `Header mismatch: the MCP-Protocol-Version header is required${typeof claim === 'string' ? ` (the body's _meta names ${JSON.stringify(claim.slice(0, 64))})` : ''}`,
    );
  }
  // A version this server does not speak is answered first, with the versions it does:
  // the client's way forward (whatever else its request may hold for that version).
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(header)) return unsupported(id, header);
  const envelope = checkEnvelope(meta);
  if (typeof envelope === 'string') return refuse(id, ErrorCode.InvalidParams, envelope);
  if (envelope.protocolVersion !== header) {
    return refuse(
      id,
      HEADER_MISMATCH,
      `Header mismatch: MCP-Protocol-Version header ${JSON.stringify(header.slice(0, 64))} does not match _meta["${PROTOCOL_VERSION_META_KEY}"] ${JSON.stringify(envelope.protocolVersion.slice(0, 64))}`,
    );
  }
  const mismatch =
    methodHeaderMismatch(headers, request.method, true) ?? nameHeaderMismatch(headers, request);
  if (mismatch !== undefined) return refuse(id, HEADER_MISMATCH, mismatch);
  return { kind: 'request', request, envelope };
}

/** The checked envelope, or the -32602 message naming what is wrong with it. */
function checkEnvelope(meta: Record<string, unknown> | undefined): ModernEnvelope | string {
  const required = `${PROTOCOL_VERSION_META_KEY} and ${CLIENT_CAPABILITIES_META_KEY}`;
  if (meta === undefined) {
    return `Invalid params: params._meta is required in the 2026-07-28 revision, with ${required}`;
  }
  const field = (key: string) => `params._meta["${key}"]`;
  const protocolVersion = meta[PROTOCOL_VERSION_META_KEY];
  if (protocolVersion === undefined)
    return `Invalid params: ${field(PROTOCOL_VERSION_META_KEY)} is required`;
  if (typeof protocolVersion !== 'string' || protocolVersion === '') {
    return `Invalid params: ${field(PROTOCOL_VERSION_META_KEY)} must be a protocol version string`;
  }
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  if (capabilities === undefined) {
    return `Invalid params: ${field(CLIENT_CAPABILITIES_META_KEY)} is required (an object, {} when the client declares none)`;
  }
  const parsedCapabilities = ClientCapabilitiesSchema.safeParse(capabilities);
  if (!parsedCapabilities.success) {
    return `Invalid params: ${field(CLIENT_CAPABILITIES_META_KEY)}${issueOf(parsedCapabilities.error)}`;
  }
  let clientInfo: z.infer<typeof ImplementationSchema> | undefined;
  if (meta[CLIENT_INFO_META_KEY] !== undefined) {
    const parsed = ImplementationSchema.safeParse(meta[CLIENT_INFO_META_KEY]);
    if (!parsed.success) {
      return `Invalid params: ${field(CLIENT_INFO_META_KEY)}${issueOf(parsed.error)}`;
    }
    clientInfo = parsed.data;
  }
  if (
    meta[LOG_LEVEL_META_KEY] !== undefined &&
    !LoggingLevelSchema.safeParse(meta[LOG_LEVEL_META_KEY]).success
  ) {
    return `Invalid params: ${field(LOG_LEVEL_META_KEY)} must be one of ${LoggingLevelSchema.options.join(', ')}`;
  }
  return {
    protocolVersion,
    clientCapabilities: parsedCapabilities.data,
    ...(clientInfo === undefined ? {} : { clientInfo }),
  };
}

/** Why the `Mcp-Method` header disagrees with the body's method, if it does. */
function methodHeaderMismatch(
  headers: IncomingHttpHeaders,
  method: string,
  required: boolean,
): string | undefined {
  const header = headerValue(headers['mcp-method']);
  if (header === undefined) {
    return required
      ? `Header mismatch: the Mcp-Method header is required (body method ${quote(method)})`
      : undefined;
  }
  if (!isFieldValue(header))
    return 'Header mismatch: the Mcp-Method header holds characters a header value may not';
  if (header !== method) {
    return `Header mismatch: Mcp-Method header ${quote(header)} does not match body method ${quote(method)}`;
  }
  return undefined;
}

/** Why the `Mcp-Name` header disagrees with the body's `params.name` / `params.uri`, if it does. */
function nameHeaderMismatch(
  headers: IncomingHttpHeaders,
  request: JSONRPCRequest,
): string | undefined {
  const source = Object.hasOwn(NAME_SOURCES, request.method)
    ? NAME_SOURCES[request.method]
    : undefined;
  const value = source === undefined ? undefined : request.params?.[source];
  // A body without the field is left to the method's own params check (-32602).
  if (typeof value !== 'string') return undefined;
  const header = headerValue(headers['mcp-name']);
  if (header === undefined) {
    return `Header mismatch: the Mcp-Name header is required for ${request.method} (body params.${source} ${quote(value)})`;
  }
  if (!isFieldValue(header))
    return 'Header mismatch: the Mcp-Name header holds characters a header value may not';
  const decoded = decodeHeaderValue(header);
  if (decoded === undefined) {
    return 'Header mismatch: the Mcp-Name header holds an invalid =?base64?…?= value';
  }
  if (decoded !== value) {
    return `Header mismatch: Mcp-Name header ${quote(decoded)} does not match body params.${source} ${quote(value)}`;
  }
  return undefined;
}

/**
 * A mirrored header value as the body would hold it: `=?base64?…?=` decoded (strict
 * base64 with padding, then UTF-8), anything else as is. `undefined` when the sentinel form
 * does not decode.
 */
export function decodeHeaderValue(value: string): string | undefined {
  const prefix = '=?base64?';
  if (!(value.length >= prefix.length + 2 && value.startsWith(prefix) && value.endsWith('?='))) {
    return value;
  }
  const encoded = value.slice(prefix.length, -2);
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
  const bytes = Buffer.from(encoded, 'base64');
  // Non-zero padding bits: not the canonical encoding of any value.
  if (bytes.toString('base64') !== encoded) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A header's value with RFC 9110 optional whitespace removed; repeated headers joined. */
function headerValue(raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  return (Array.isArray(raw) ? raw.join(', ') : raw).replace(/^[ \t]+|[ \t]+$/g, '');
}

/** Visible ASCII, space and tab: what RFC 9110 lets a field value hold (no obs-text). */
function isFieldValue(value: string): boolean {
  return /^[\t\x20-\x7e]*$/.test(value);
}

function metaOf(message: unknown): Record<string, unknown> | undefined {
  const params = isObject(message) ? message.params : undefined;
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) ? meta : undefined;
}

function issueOf(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.map(String).join('.');
  return `${path === '' ? '' : `.${path}`}: ${issue.message}`;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

function unsupported(id: RequestId, version: string): ModernMessage {
  return refuse(
    id,
    UNSUPPORTED_PROTOCOL_VERSION,
    `Unsupported protocol version ${JSON.stringify(version.slice(0, 64))} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: version.slice(0, 64) },
  );
}

function refuse(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): ModernMessage {
  return { kind: 'refused', status: 400, error: jsonRpcError(id, code, message, data) };
}
