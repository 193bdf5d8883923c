import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import type { Json } from './mcp-http';

export interface SdkClientOptions {
  headers?: Record<string, string>;
  /**
   * Replaces the Accept header the SDK sends (`application/json, text/event-stream`), to act
   * like clients that send only `application/json` (MCP Inspector) or prefer SSE.
   */
  accept?: string;
}

/**
 * The official SDK client (`Client` + `StreamableHTTPClientTransport`) connected to
 * `baseUrl + path`; `connect` runs initialize and notifications/initialized.
 */
export async function connectSdkClient(
  baseUrl: string,
  path: string,
  options: SdkClientOptions = {},
): Promise<Client> {
  const requests: Array<{ method: string; accept: string | null }> = [];
  const transport = new StreamableHTTPClientTransport(new URL(path, baseUrl), {
    requestInit: { headers: options.headers },
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      if (options.accept !== undefined && init?.method === 'POST')
        headers.set('Accept', options.accept);
      requests.push({ method: init?.method ?? 'GET', accept: headers.get('accept') });
      return fetch(input, { ...init, headers });
    },
  });
  const client = new Client({ name: 'agent-data-tests', version: '1.0.0' });
  await client.connect(transport);
  (client as Client & { sentRequests: typeof requests }).sentRequests = requests;
  return client;
}

/** The Accept headers the client actually sent, for asserting the override took effect. */
export function sentRequests(client: Client): Array<{ method: string; accept: string | null }> {
  return (client as Client & { sentRequests: Array<{ method: string; accept: string | null }> })
    .sentRequests;
}

/** The JSON of a tool result's first text item. */
export function resultJson(result: unknown): Json {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content;
  const text = content?.[0]?.text;
  if (typeof text !== 'string') throw new Error(`no text content in ${JSON.stringify(result)}`);
  return JSON.parse(text);
}

/** How an official SDK client connects: v1 (2025 handshake), or v2 probing or pinned to 2026-07-28. */
export type SdkClientKind = 'v1' | 'v2-auto' | 'v2-pin';

/**
 * The methods every official SDK client has, v1 and v2 alike: the tests drive both through
 * this one shape. Results are read as JSON.
 */
export interface AnySdkClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
  listResources(params?: { cursor?: string }): Promise<Json>;
  readResource(params: { uri: string }): Promise<Json>;
  listResourceTemplates(): Promise<Json>;
  listPrompts(): Promise<Json>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<Json>;
  complete(params: Json): Promise<Json>;
  getServerCapabilities(): Json;
  close(): Promise<void>;
}

/** The official v2 SDK client in `auto` or pinned 2026-07-28 negotiation on `baseUrl + path`. */
export async function connectV2Client(
  baseUrl: string,
  path: string,
  mode: 'auto' | 'legacy' | { pin: string },
  headers: Record<string, string> = {},
): Promise<V2Client> {
  const transport = new V2Transport(new URL(path, baseUrl), { requestInit: { headers } });
  const client = new V2Client(
    { name: 'agent-data-tests', version: '1.0.0' },
    { versionNegotiation: { mode } },
  );
  await client.connect(transport);
  return client;
}

/** A connected client of `kind`, and the protocol version it speaks. */
export async function connectAnyClient(
  kind: SdkClientKind,
  baseUrl: string,
  path: string,
): Promise<{ client: AnySdkClient; protocolVersion: string | undefined }> {
  if (kind === 'v1') {
    const client = await connectSdkClient(baseUrl, path);
    const transport = client.transport as StreamableHTTPClientTransport | undefined;
    return {
      client: client as unknown as AnySdkClient,
      protocolVersion: transport?.protocolVersion,
    };
  }
  const client = await connectV2Client(
    baseUrl,
    path,
    kind === 'v2-auto' ? 'auto' : { pin: '2026-07-28' },
  );
  return {
    client: client as unknown as AnySdkClient,
    protocolVersion: client.getNegotiatedProtocolVersion(),
  };
}
