import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';

jest.setTimeout(60_000);

/**
 * What Node's HTTP parser and timers refuse before any route runs (docs/operations.md): oversized
 * headers, a broken request line, a client too slow with its head or its body. Each gets a
 * JSON answer in the shape of the edge it aimed at (REST or JSON-RPC), then the connection
 * closes; nothing hangs. The timeouts are set short here; the test waits for the answer,
 * it does not time it.
 */
describe('HTTP limits and slow clients', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' });
    port = Number(new URL(t.baseUrl).port);
  });
  afterAll(() => t.close());

  /** Writes `parts` (one write each, `pauseMs` apart), then reads until the server closes. */
  async function raw(parts: string[], pauseMs = 0): Promise<Answer> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const received = collect(socket);
    for (const part of parts) {
      if (socket.destroyed) break;
      socket.write(part);
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return parse(await received);
  }

  const bigHeader = `X-Padding: ${'a'.repeat(20 * 1024)}\r\n`;

  it('answers headers over 16 KiB with 431 and a REST error body', async () => {
    const answer = await raw([`GET /documents HTTP/1.1\r\nHost: x\r\n${bigHeader}\r\n`]);
    expect(answer).toMatchObject({
      status: 431,
      headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' },
      body: { error: { code: 'HEADERS_TOO_LARGE', message: expect.stringMatching(/16 KiB/) } },
    });
  });

  it.each(['/mcp', '/mcp-readonly', '/readonly/mcp', '/gpt/mcp'])(
    'answers headers over 16 KiB on %s with 431 and a JSON-RPC error',
    async (path) => {
      const answer = await raw([
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${bigHeader}\r\n`,
      ]);
      expect(answer).toMatchObject({
        status: 431,
        body: { jsonrpc: '2.0', id: null, error: { code: -32000 } },
      });
    },
  );

  it('answers a request line that is not HTTP with 400 and a JSON body', async () => {
    const answer = await raw(['GET /documents HTTP/1.1\r\nHost x\r\n\r\n']);
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'BAD_REQUEST' } } });
  });

  it('answers a client that trickles its headers with 408 once HTTP_HEADERS_TIMEOUT_MS is over', async () => {
    // One header line every 300 ms: each byte resets no timer; the whole head is late.
    const lines = Array.from({ length: 20 }, (_, i) => `X-Slow-${i}: yes\r\n`);
    const answer = await raw(['GET /documents HTTP/1.1\r\nHost: x\r\n', ...lines, '\r\n'], 300);
    expect(answer).toMatchObject({
      status: 408,
      body: { error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) } },
    });
  });

  it('drops a client that never finishes its body once HTTP_REQUEST_TIMEOUT_MS is over', async () => {
    const answer = await raw([
      'POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
      '{"document_id": "slow/body.md", ',
    ]);
    expect(answer).toMatchObject({ status: 408, body: { error: { code: 'REQUEST_TIMEOUT' } } });
    await request(t.baseUrl).get('/documents/slow/body.md').expect(404);
  });

  it('keeps serving everyone else meanwhile', async () => {
    const slow = raw(['GET /documents HTTP/1.1\r\nHost: x\r\n']);
    await request(t.baseUrl).get('/health/live').expect(200);
    expect((await slow).status).toBe(408);
  });
});

interface Answer {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
}

function collect(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
  });
}

function parse(text: string): Answer {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const status = /^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1];
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  const bodyText = rest.join('\r\n\r\n');
  return {
    status: status === undefined ? undefined : Number(status),
    headers,
    body: bodyText ? JSON.parse(bodyText) : undefined,
  };
}
