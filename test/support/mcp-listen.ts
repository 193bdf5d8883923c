// Listening for change notifications in the tests: the official v2 SDK client's `listen`,
// with every notification kept, and a raw reader of a listen stream for what the SDK hides.
import type { Client as V2Client } from '@modelcontextprotocol/client';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import request from 'supertest';
import { connectV2Client } from './mcp-sdk';
import { ENVELOPE, modernHeaders } from './mcp-modern';
import { waitFor } from './wait';

/** A v2 client pinned to 2026-07-28, with the change notifications it received, in order. */
export interface Listening {
  readonly client: V2Client;
  /** `updated <uri>` and `list_changed`, in arrival order. */
  readonly heard: string[];
}

export async function listeningClient(
  baseUrl: string,
  headers: Record<string, string>,
): Promise<Listening> {
  const client = await connectV2Client(baseUrl, '/mcp', { pin: '2026-07-28' }, headers);
  const heard: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    heard.push(`updated ${notification.params.uri}`);
  });
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    heard.push('list_changed');
  });
  return { client, heard };
}

/** `mcp_listeners` of a server's /metrics. */
export async function openListeners(baseUrl: string, key: string): Promise<number> {
  const scrape = await request(baseUrl).get('/metrics').set('X-API-Key', key).expect(200);
  const line = /^mcp_listeners (\d+)$/m.exec(scrape.text);
  if (line === null) throw new Error('mcp_listeners is missing from /metrics');
  return Number(line[1]);
}

/** A listen stream read by hand: its response, and its SSE events' JSON as they come. */
export class RawListen {
  readonly events: Array<Record<string, unknown>> = [];
  response!: IncomingMessage;
  ended = false;
  private buffer = '';

  private constructor(private readonly request: ReturnType<typeof httpRequest>) {}

  /** POSTs `subscriptions/listen` with `filter`, resolving once the answer's head arrives. */
  static async open(
    baseUrl: string,
    key: string,
    filter: object,
    id: string | number = 'raw-1',
  ): Promise<RawListen> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: filter, _meta: ENVELOPE },
    });
    const outgoing = httpRequest(new URL('/mcp', baseUrl), {
      method: 'POST',
      headers: {
        ...modernHeaders('subscriptions/listen'),
        'X-API-Key': key,
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
      },
    });
    const raw = new RawListen(outgoing);
    raw.response = await new Promise<IncomingMessage>((resolve, reject) => {
      outgoing.once('response', resolve);
      outgoing.once('error', reject);
      outgoing.end(body);
    });
    raw.response.setEncoding('utf8');
    raw.response.on('data', (chunk: string) => raw.take(chunk));
    raw.response.once('end', () => (raw.ended = true));
    return raw;
  }

  /** Stops reading (the kernel's buffers fill, then the server's queue). */
  pause(): void {
    this.response.pause();
  }

  resume(): void {
    this.response.resume();
  }

  close(): void {
    this.request.destroy();
  }

  next(index: number, what = `event ${index}`): Promise<Record<string, unknown>> {
    return waitFor(() => this.events[index], what, 10_000);
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data !== '') this.events.push(JSON.parse(data) as Record<string, unknown>);
    }
  }
}
