import http from 'node:http';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { post, rpc, sseEvents, type Json } from './support/mcp-http';
import { ENVELOPE, modernHeaders } from './support/mcp-modern';
import { FakeOpenAi } from './support/fake-openai';
import { page, PageServer, startPageServer } from './support/mcp-page-server';
import { waitFor } from './support/wait';

/** An SSE answer read as it arrives, for waiting on what it has sent so far. */
interface OpenStream {
  readonly status: Promise<number>;
  /** Everything received so far. */
  text(): string;
  /** Resolves once the received text satisfies `done` (or rejects when the stream ends first). */
  until(done: (text: string) => boolean): Promise<string>;
  /** Closes the connection: the client goes away. */
  close(): void;
}

function openStream(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): OpenStream {
  const payload = JSON.stringify(body);
  let received = '';
  let ended = false;
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((waiter) => waiter());
  let req!: http.ClientRequest;
  const status = new Promise<number>((resolve, reject) => {
    req = http.request(
      new URL(path, baseUrl),
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          received += chunk;
          wake();
        });
        res.on('end', () => {
          ended = true;
          wake();
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', (error) => {
      ended = true;
      wake();
      reject(error);
    });
    req.end(payload);
  });
  status.catch(() => undefined);
  return {
    status,
    text: () => received,
    until(done) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (done(received)) resolve(received);
          else if (ended) reject(new Error(`the stream ended first: ${received}`));
          else waiters.push(check);
        };
        check();
      });
    },
    close: () => req.destroy(),
  };
}

/** A page handler that answers only when released, and tells when its request arrived or went away. */
function gatedPage() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const requested = new Promise<void>((resolve) => (arrived = resolve));
  let gone!: () => void;
  const abandoned = new Promise<void>((resolve) => (gone = resolve));
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    arrived();
    req.socket.once('close', () => gone());
    void released.then(() => {
      if (!res.destroyed)
        page(
          'text/html',
          '<html><head><title>Slow</title></head><body><h1>Slow</h1><p>Finally.</p></body></html>',
        )(req, res);
    });
  };
  return { handler, release, requested, abandoned };
}

const progressEvents = (text: string) =>
  sseEvents(text)
    .map((event) => event.data as Json)
    .filter((message) => message.method === 'notifications/progress');

describe('progress, keep-alive and cancellation on SSE answers (docs/mcp.md)', () => {
  let t: TestApp;
  let pages: PageServer;
  let gates: Record<string, ReturnType<typeof gatedPage>>;

  beforeAll(async () => {
    gates = { legacy: gatedPage(), modern: gatedPage(), keepalive: gatedPage() };
    pages = await startPageServer({
      '/article.html': page(
        'text/html',
        '<html><head><title>Article</title></head><body><h1>Article</h1><p>Words.</p></body></html>',
      ),
      '/slow-legacy.html': gates.legacy.handler,
      '/slow-modern.html': gates.modern.handler,
      '/slow-keepalive.html': gates.keepalive.handler,
    });
    t = await startTestApp({
      INGEST_ALLOWED_HOSTS: '127.0.0.1',
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      MCP_SSE_KEEPALIVE_MS: '50',
    });
    const db = await t.db.client();
    for (let i = 0; i < 12; i++) {
      await db.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash) VALUES ($1, 'batch', 'T', 'body', 'h')`,
        [`batch/d${i}.md`],
      );
    }
  });
  afterAll(async () => {
    for (const gate of Object.values(gates)) gate.release();
    await t.close();
    await pages.close();
  });

  const ids = Array.from({ length: 12 }, (_, i) => `batch/d${i}.md`);

  describe.each(['legacy', 'modern'] as const)('%s era', (era) => {
    const headers = (accept: string): Record<string, string> =>
      era === 'modern'
        ? { ...modernHeaders('tools/call', 'batch_read'), Accept: accept }
        : { Accept: accept, 'MCP-Protocol-Version': '2025-11-25' };
    const callBody = (name: string, args: Json, progressToken?: string) =>
      rpc(
        'tools/call',
        {
          name,
          arguments: args,
          ...(era === 'modern' || progressToken !== undefined
            ? {
                _meta: {
                  ...(era === 'modern' ? ENVELOPE : {}),
                  ...(progressToken === undefined ? {} : { progressToken }),
                },
              }
            : {}),
        },
        `${era}-${name}`,
      );

    it('batch_read over many ids reports progress, then answers, on one SSE stream', async () => {
      const response = await post(
        t.baseUrl,
        '/mcp',
        callBody('batch_read', { document_ids: ids }, 'tok-1'),
        headers('text/event-stream'),
      );
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const events = sseEvents(response.text).map((event) => event.data as Json);
      const progress = events.slice(0, -1);
      expect(progress.map((message) => [message.params.progress, message.params.total])).toEqual([
        [0, 12],
        [5, 12],
        [10, 12],
        [12, 12],
      ]);
      expect(
        progress.every(
          (message) =>
            message.method === 'notifications/progress' && message.params.progressToken === 'tok-1',
        ),
      ).toBe(true);
      expect(events.at(-1)).toMatchObject({
        id: `${era}-batch_read`,
        result: { structuredContent: { found_count: 12 } },
      });
    });

    it('sends no progress when the answer is JSON, or when no progress token was given', async () => {
      const json = await post(
        t.baseUrl,
        '/mcp',
        callBody('batch_read', { document_ids: ids }, 'tok-2'),
        headers('application/json'),
      );
      expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(json.body).toMatchObject({ result: { structuredContent: { found_count: 12 } } });
      const quiet = await post(
        t.baseUrl,
        '/mcp',
        callBody('batch_read', { document_ids: ids }),
        headers('text/event-stream'),
      );
      expect(sseEvents(quiet.text)).toHaveLength(1);
    });

    it('ingest_document reports fetching, converting and storing', async () => {
      const response = await post(
        t.baseUrl,
        '/mcp',
        callBody(
          'ingest_document',
          { url: `${pages.url}/article.html`, document_id: `ingested/${era}.md` },
          'tok-3',
        ),
        {
          ...headers('text/event-stream'),
          ...(era === 'modern' ? { 'Mcp-Name': 'ingest_document' } : {}),
        },
      );
      const progress = progressEvents(response.text);
      expect(progress.map((message) => message.params.message.split(' ')[0])).toEqual([
        'fetching',
        'converting',
        'storing',
        'stored',
      ]);
      expect(progress.map((message) => message.params.progress)).toEqual([0, 1, 2, 3]);
      expect(sseEvents(response.text).at(-1)?.data).toMatchObject({
        result: { structuredContent: { document_id: `ingested/${era}.md` } },
      });
    });
  });

  it('keeps a quiet SSE answer alive with comments until the answer comes', async () => {
    const stream = openStream(
      t.baseUrl,
      '/mcp',
      rpc(
        'tools/call',
        {
          name: 'ingest_document',
          arguments: {
            url: `${pages.url}/slow-keepalive.html`,
            document_id: 'ingested/keepalive.md',
          },
        },
        'k',
      ),
      { Accept: 'text/event-stream' },
    );
    expect(await stream.status).toBe(200);
    await stream.until((text) => text.split(': keepalive\n\n').length > 2);
    gates.keepalive.release();
    const text = await stream.until((received) => received.includes('event: message'));
    expect(text).toMatch(/^(: keepalive\n\n)+event: message\ndata: .+\n\n$/);
    expect(sseEvents(text.replace(/: keepalive\n\n/g, ''))[0].data).toMatchObject({
      id: 'k',
      result: { structuredContent: { created: true } },
    });
  });

  describe('a body slower than the keep-alive interval', () => {
    /** POSTs `body` after waiting three keep-alive intervals with only the headers sent. */
    function slowPost(body: unknown, headers: Record<string, string>) {
      const payload = JSON.stringify(body);
      return new Promise<{ status: number; type: string | undefined; text: string }>(
        (resolve, reject) => {
          const req = http.request(
            new URL('/mcp', t.baseUrl),
            {
              method: 'POST',
              headers: {
                'Content-Type': 'application/json',
                'Content-Length': Buffer.byteLength(payload),
                ...headers,
              },
            },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => (text += chunk));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text }),
              );
            },
          );
          req.on('error', reject);
          req.flushHeaders();
          setTimeout(() => req.end(payload), 150);
        },
      );
    }

    it.each([
      [
        'a 2026 refusal keeps its 400',
        { ...modernHeaders('tools/list'), 'Mcp-Method': 'nope' },
        rpc('tools/list', { _meta: ENVELOPE }),
        400,
      ],
      [
        'a 2026 unknown method keeps its 404',
        modernHeaders('nope/nope'),
        rpc('nope/nope', { _meta: ENVELOPE }),
        404,
      ],
      [
        'a notification keeps its 202',
        {},
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        202,
      ],
      ['a 2025 invalid request keeps its 400', {}, { jsonrpc: '2.0', id: 1 }, 400],
    ])('%s, without keep-alive comments', async (_name, headers, body, status) => {
      const response = await slowPost(body, { ...headers, Accept: 'text/event-stream' });
      expect(response.status).toBe(status);
      expect(response.text).not.toContain('keepalive');
    });
  });

  it('2026 era: closing the response stream cancels the call; nothing is written', async () => {
    const stream = openStream(
      t.baseUrl,
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 'c',
        method: 'tools/call',
        params: {
          name: 'ingest_document',
          arguments: { url: `${pages.url}/slow-modern.html`, document_id: 'ingested/cancelled.md' },
          _meta: { ...ENVELOPE, progressToken: 'p' },
        },
      },
      { ...modernHeaders('tools/call', 'ingest_document'), Accept: 'text/event-stream' },
    );
    await gates.modern.requested;
    await stream.until((text) => text.includes('fetching'));
    stream.close();
    // The server drops its outbound fetch at once: the page's request goes away.
    await gates.modern.abandoned;
    gates.modern.release();
    const metrics = await waitFor(
      async () => {
        const text = (await request(t.baseUrl).get('/metrics')).text;
        return /mcp_tool_calls_total\{profile="internal",tool="ingest_document",outcome="cancelled"\} 1/.test(
          text,
        )
          ? text
          : undefined;
      },
      'the cancelled ingest counted in /metrics',
      10_000,
    );
    expect(metrics).toBeDefined();
    await request(t.baseUrl).get('/documents/ingested/cancelled.md').expect(404);
  });

  it('2026 era: closing the stream drops the embedding request of a search', async () => {
    const openai = await new FakeOpenAi().start();
    const app = await startTestApp({
      EMBEDDINGS_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: openai.url,
      OPENAI_MAX_RETRIES: '0',
    });
    try {
      openai.holdWhen((embedding) => embedding.input.includes('cancel me'));
      const stream = openStream(
        app.baseUrl,
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 's',
          method: 'tools/call',
          params: { name: 'search_knowledge', arguments: { query: 'cancel me' }, _meta: ENVELOPE },
        },
        { ...modernHeaders('tools/call', 'search_knowledge'), Accept: 'text/event-stream' },
      );
      await openai.waitForHeld();
      stream.close();
      // The server's request to the embeddings API goes away with its client.
      await openai.waitForAbandoned();
      expect(openai.abandoned).toBe(1);
    } finally {
      openai.release();
      await app.close();
      await openai.close();
    }
  });

  it('2025 era: a client that disconnects has not cancelled; the call runs to the end', async () => {
    const stream = openStream(
      t.baseUrl,
      '/mcp',
      rpc(
        'tools/call',
        {
          name: 'ingest_document',
          arguments: { url: `${pages.url}/slow-legacy.html`, document_id: 'ingested/kept.md' },
        },
        'l',
      ),
      { Accept: 'text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
    );
    await gates.legacy.requested;
    stream.close();
    gates.legacy.release();
    const stored = await waitFor(
      async () => {
        const response = await request(t.baseUrl).get('/documents/ingested/kept.md');
        return response.status === 200 ? response.body : undefined;
      },
      'the ingested document stored',
      10_000,
    );
    expect(stored).toMatchObject({ document_id: 'ingested/kept.md', title: 'Slow' });
  });
});
