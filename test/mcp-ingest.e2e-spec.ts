import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { DomainError } from '../src/common/domain-error';
import { AddressPolicy } from '../src/outbound/address-policy';
import { SafeFetcher } from '../src/outbound/safe-fetch';
import { UrlPolicy } from '../src/outbound/url-policy';
import { startTestApp, TestApp } from './support/app';
import { callTool, toolJson } from './support/mcp-http';
import { page, PageServer, startPageServer } from './support/mcp-page-server';

const MiB = 1024 * 1024;
const GUIDE = `<!doctype html><html><head><title>Install guide</title><script>track()</script></head>
<body><nav>Home</nav><h1>Install</h1><p>Run <a href="/x">the installer</a>.</p><h2>Check</h2><p>Done.</p></body></html>`;

/** Calls ingest_document on /mcp and returns the result JSON (success or `{error}`). */
async function ingest(t: TestApp, args: Record<string, unknown>) {
  const envelope = await callTool(t.baseUrl, '/mcp', 'ingest_document', args);
  return { isError: envelope.result.isError === true, json: toolJson(envelope) };
}

let pages: PageServer;
let hung: http.ServerResponse[] = [];

beforeAll(async () => {
  pages = await startPageServer({
    '/docs/guide.html': page('text/html; charset=utf-8', GUIDE),
    '/notes.md': page('text/markdown', '# Notes\n\nPlain markdown.'),
    '/changing': (_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`version ${pages.hits.length}`),
    '/redirect/ok': (_req, res) => res.writeHead(302, { Location: '/notes.md' }).end(),
    '/redirect/metadata': (_req, res) =>
      res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/redirect/metadata-decimal': (_req, res) =>
      res.writeHead(301, { Location: 'http://2852039166/' }).end(),
    '/redirect/localhost': (_req, res) =>
      res.writeHead(307, { Location: `http://localhost:${pages.port}/notes.md` }).end(),
    '/redirect/ipv6-loopback': (_req, res) =>
      res.writeHead(308, { Location: `http://[::1]:${pages.port}/notes.md` }).end(),
    '/redirect/loop': (_req, res) => res.writeHead(302, { Location: '/redirect/loop' }).end(),
    '/exactly-5mib': page('text/plain', 'a'.repeat(5 * MiB)),
    '/too-big': page('text/plain', 'a'.repeat(5 * MiB + 1)),
    '/too-big-chunked': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      for (let i = 0; i < 6; i++) res.write('b'.repeat(MiB));
      res.end();
    },
    '/gzip-bomb': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(6 * MiB, 'z')));
    },
    '/gzip-ok': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' });
      res.end(gzipSync('compressed text'));
    },
    '/hang': (_req, res) => {
      hung.push(res);
    },
    '/hang-body': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('partial');
      hung.push(res);
    },
    '/error': page('text/plain', 'boom', 500),
    '/pdf': page('application/pdf', '%PDF-1.7'),
  });
});

afterAll(async () => {
  hung.forEach((res) => res.destroy());
  hung = [];
  await pages.close();
});

describe('ingest_document: loopback and private addresses are refused by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      INGEST_ALLOWED_HOSTS: '127.0.0.1,localhost,[::1],::ffff:127.0.0.1,169.254.169.254,10.0.0.1',
      INGEST_ALLOW_HTTP: 'true',
    });
  });
  afterAll(() => t.close());

  it.each([
    ['IPv4', (port: number) => `http://127.0.0.1:${port}/notes.md`],
    ['a name resolving to loopback', (port: number) => `http://localhost:${port}/notes.md`],
    ['decimal', (port: number) => `http://2130706433:${port}/notes.md`],
    ['octal', (port: number) => `http://0177.0.0.1:${port}/notes.md`],
    ['hex', (port: number) => `http://0x7f000001:${port}/notes.md`],
    ['short', (port: number) => `http://127.1:${port}/notes.md`],
    ['IPv6', (port: number) => `http://[::1]:${port}/notes.md`],
    ['IPv4-mapped IPv6', (port: number) => `http://[::ffff:127.0.0.1]:${port}/notes.md`],
    ['the metadata service', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', () => 'http://10.0.0.1/'],
  ])('%s → FORBIDDEN_URL, and nothing is fetched', async (_case, url) => {
    const before = pages.hits.length;
    const result = await ingest(t, { url: url(pages.port) });
    expect(result.isError).toBe(true);
    expect(result.json.error.code).toBe('FORBIDDEN_URL');
    expect(result.json.error.message).toMatch(/not a public address|cloud metadata/);
    expect(pages.hits.length).toBe(before);
  });

  it('refuses hosts off the allow-list and credentials in the URL', async () => {
    expect((await ingest(t, { url: 'http://example.com/' })).json.error).toMatchObject({
      code: 'FORBIDDEN_URL',
      message: expect.stringMatching(/allow-list/),
    });
    expect(
      (await ingest(t, { url: `http://u:p@127.0.0.1:${pages.port}/` })).json.error.message,
    ).toMatch(/credentials/);
    expect((await ingest(t, { url: 'file:///etc/passwd' })).json.error.code).toBe('FORBIDDEN_URL');
    expect((await ingest(t, { url: 'not a url' })).json.error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      field: 'url',
    });
  });
});

describe('ingest_document without INGEST_ALLOWED_HOSTS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('refuses every URL', async () => {
    const result = await ingest(t, { url: 'https://example.com/' });
    expect(result.json.error).toMatchObject({
      code: 'FORBIDDEN_URL',
      message: expect.stringMatching(/INGEST_ALLOWED_HOSTS is empty/),
    });
  });

  it('refuses plain http unless INGEST_ALLOW_HTTP is set', async () => {
    const strict = await startTestApp({ INGEST_ALLOWED_HOSTS: 'docs.example.com' });
    try {
      const result = await ingest(strict, { url: 'http://docs.example.com/' });
      expect(result.json.error).toMatchObject({
        code: 'FORBIDDEN_URL',
        message: expect.stringMatching(/use https/),
      });
    } finally {
      await strict.close();
    }
  });
});

describe('ingest_document with loopback opened by INGEST_ALLOWED_PRIVATE_CIDRS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      INGEST_ALLOWED_HOSTS: '127.0.0.1,[::1],169.254.169.254',
      INGEST_ALLOW_HTTP: 'true',
      // Link-local is opened too, to show that the metadata address stays closed anyway.
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32,169.254.0.0/16',
      INGEST_TIMEOUT_MS: '2000',
      MAX_BODY_BYTES: String(6 * MiB),
    });
  });
  afterAll(() => t.close());

  it('stores an HTML page as the markdown of its content, under an id derived from the URL', async () => {
    const url = `http://127.0.0.1:${pages.port}/docs/guide.html`;
    const result = await ingest(t, { url, tags: ['web'] });
    expect(result.isError).toBe(false);
    expect(result.json).toMatchObject({
      document_id: 'ingested/127.0.0.1/docs/guide.md',
      revision: 1,
      created: true,
      // The content's heading, as a website source titles a page: `<title>` only without one.
      title: 'Install',
      vector_status: 'pending',
      source_url: url,
      final_url: url,
      media_type: 'text/html',
    });
    const db = await t.db.client();
    const { rows } = await db.query(
      `SELECT body, tags, metadata->>'source_url' AS source FROM kb_documents WHERE document_id = $1`,
      [result.json.document_id],
    );
    // Readability takes the heading that names the page as its title, not into the body.
    expect(rows[0]).toEqual({
      body: `Run [the installer](http://127.0.0.1:${pages.port}/x).\n\n## Check\n\nDone.`,
      tags: ['web'],
      source: url,
    });
  });

  it('refreshes the document of a URL ingested before, and refuses an id holding something else', async () => {
    const url = `http://127.0.0.1:${pages.port}/changing`;
    const first = await ingest(t, { url, document_id: 'web/changing.md' });
    const second = await ingest(t, { url, path: 'web/changing.md' });
    expect(first.json).toMatchObject({ revision: 1, created: true });
    expect(second.json).toMatchObject({ revision: 2, created: false, changed: true });
    await callTool(t.baseUrl, '/mcp', 'upload_document', {
      document_id: 'web/mine.md',
      content: 'mine',
    });
    const clash = await ingest(t, { url, document_id: 'web/mine.md' });
    expect(clash.json.error.code).toBe('ALREADY_EXISTS');
  });

  it('writes nothing when the page ingested again is the same: its fetch time is no change', async () => {
    const url = `http://127.0.0.1:${pages.port}/notes.md`;
    const first = await ingest(t, { url, document_id: 'web/same.md' });
    const again = await ingest(t, { url, document_id: 'web/same.md' });
    expect(first.json).toMatchObject({ revision: 1, created: true, changed: true });
    expect(again.json).toMatchObject({ revision: 1, created: false, changed: false });
    const db = await t.db.client();
    const audit = await db.query(`SELECT operation FROM kb_audit WHERE document_id = $1`, [
      'web/same.md',
    ]);
    expect(audit.rows).toEqual([{ operation: 'create' }]);
    const stored = await db.query(
      `SELECT metadata->>'fetched_at' AS fetched_at FROM kb_documents WHERE document_id = $1`,
      ['web/same.md'],
    );
    // The fetch that made the revision.
    expect(stored.rows[0].fetched_at).not.toBeNull();
  });

  it('follows redirects that stay allowed', async () => {
    const result = await ingest(t, {
      url: `http://127.0.0.1:${pages.port}/redirect/ok`,
      document_id: 'web/redirected.md',
    });
    expect(result.json).toMatchObject({
      final_url: `http://127.0.0.1:${pages.port}/notes.md`,
      title: 'Notes',
    });
  });

  it.each([
    ['the metadata service', '/redirect/metadata', /cloud metadata/],
    ['the metadata service, decimal', '/redirect/metadata-decimal', /cloud metadata/],
    ['a host off the list', '/redirect/localhost', /not on this server's ingest allow-list/],
    ['IPv6 loopback, listed but not opened', '/redirect/ipv6-loopback', /not a public address/],
  ])('re-checks every redirect: to %s → FORBIDDEN_URL', async (_case, path, message) => {
    const result = await ingest(t, {
      url: `http://127.0.0.1:${pages.port}${path}`,
      document_id: 'web/r.md',
    });
    expect(result.json.error).toMatchObject({
      code: 'FORBIDDEN_URL',
      message: expect.stringMatching(message),
    });
  });

  it('gives up after five redirects', async () => {
    const result = await ingest(t, { url: `http://127.0.0.1:${pages.port}/redirect/loop` });
    expect(result.json.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: expect.stringMatching(/more than 5 redirects/),
    });
  });

  it('accepts a page of exactly 5 MiB and refuses one byte more, announced, streamed or compressed', async () => {
    const ok = await ingest(t, {
      url: `http://127.0.0.1:${pages.port}/exactly-5mib`,
      document_id: 'web/5mib.md',
    });
    expect(ok.json).toMatchObject({ chars: 5 * MiB });
    for (const path of ['/too-big', '/too-big-chunked', '/gzip-bomb']) {
      const result = await ingest(t, { url: `http://127.0.0.1:${pages.port}${path}` });
      expect({ path, error: result.json.error }).toMatchObject({
        path,
        error: { code: 'TOO_LARGE', message: expect.stringMatching(/larger than 5242880 bytes/) },
      });
    }
    const gzip = await ingest(t, {
      url: `http://127.0.0.1:${pages.port}/gzip-ok`,
      document_id: 'web/gz.md',
    });
    expect(gzip.json.chars).toBe('compressed text'.length);
  });

  it('times out on a server that does not answer, or does not finish its body', async () => {
    for (const path of ['/hang', '/hang-body']) {
      const result = await ingest(t, { url: `http://127.0.0.1:${pages.port}${path}` });
      expect(result.json.error).toMatchObject({
        code: 'UPSTREAM_ERROR',
        message: expect.stringMatching(/within 2000 ms/),
      });
    }
  });

  it('reports upstream failures and unusable content as UPSTREAM_ERROR', async () => {
    expect(
      (await ingest(t, { url: `http://127.0.0.1:${pages.port}/error` })).json.error.message,
    ).toMatch(/HTTP 500/);
    expect(
      (await ingest(t, { url: `http://127.0.0.1:${pages.port}/pdf` })).json.error.message,
    ).toMatch(/application\/pdf/);
    const closedPort = await new Promise<number>((resolve) => {
      const server = http.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    expect((await ingest(t, { url: `http://127.0.0.1:${closedPort}/` })).json.error.code).toBe(
      'UPSTREAM_ERROR',
    );
  });
});

describe('SafeFetcher and DNS', () => {
  const limits = { timeoutMs: 2000, maxBytes: MiB, maxRedirects: 5 };

  it('refuses a name when any of its addresses is refused', async () => {
    const fetcher = new SafeFetcher(
      new UrlPolicy(['docs.test'], true, new AddressPolicy()),
      limits,
      (_name, done) =>
        done(null, [
          { address: '93.184.215.14', family: 4 },
          { address: '10.0.0.7', family: 4 },
        ]),
    );
    await expect(fetcher.fetch('http://docs.test/')).rejects.toMatchObject({
      code: 'FORBIDDEN_URL',
      message: expect.stringMatching(/docs\.test resolves to 10\.0\.0\.7 is not a public address/),
    });
  });

  it.each([['169.254.169.254'], ['::ffff:a9fe:a9fe'], ['fd00:ec2::254'], ['::1'], ['fe80::1']])(
    'refuses a name resolving to %s',
    async (address) => {
      const fetcher = new SafeFetcher(
        new UrlPolicy(['docs.test'], true, new AddressPolicy()),
        limits,
        (_n, done) => done(null, [{ address, family: address.includes(':') ? 6 : 4 }]),
      );
      const error = await fetcher.fetch('http://docs.test/').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('FORBIDDEN_URL');
    },
  );

  it('connects to the address it checked, keeping the name for the Host header', async () => {
    let seenHost: string | undefined;
    const server = await startPageServer({
      '/': (req, res) => {
        seenHost = req.headers.host;
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('pinned');
      },
    });
    try {
      const resolutions: string[] = [];
      const fetcher = new SafeFetcher(
        new UrlPolicy(['docs.test'], true, new AddressPolicy(['127.0.0.1/32'])),
        limits,
        (name, done) => {
          resolutions.push(name);
          done(null, [{ address: '127.0.0.1', family: 4 }]);
        },
      );
      const fetched = await fetcher.fetch(`http://docs.test:${server.port}/`);
      expect(fetched.body.toString()).toBe('pinned');
      expect(seenHost).toBe(`docs.test:${server.port}`);
      expect(resolutions).toEqual(['docs.test']);
    } finally {
      await server.close();
    }
  });
});
