import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
