import type http from 'node:http';
import { Document, Packer, Paragraph } from 'docx';
import {
  answer,
  html,
  type LoopbackSite,
  type Route,
  startLoopbackSite,
} from '../../../../test/support/loopback-site';
import { aContext, aWebConnector, keysOf } from '../../../../test/support/web-source';
import type { Enumeration } from '../connector';

const HTML = 'text/html; charset=utf-8';
const MiB = 1024 * 1024;

function item(enumeration: Enumeration, key: string) {
  const found = enumeration.items.find((entry) => entry.key === key);
  if (!found) throw new Error(`no item ${key} in ${keysOf(enumeration).join(', ')}`);
  return found;
}

/** A home page at /docs/ linking to each of `paths`. */
function home(...paths: string[]): Route {
  return answer(HTML, html('Home', paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')));
}

/** Answers the statuses in turn (the last one for good), a page once they are spent. */
function statuses(
  list: Array<[number, Record<string, string>?]>,
  page = html('P', '<p>P</p>'),
): Route {
  let n = 0;
  return (_request, response) => {
    const [status, headers] = list[Math.min(n++, list.length - 1)];
    if (status === 200) response.writeHead(200, { 'Content-Type': HTML }).end(page);
    else response.writeHead(status, headers).end();
  };
}

const sites: LoopbackSite[] = [];
async function site(routes: Record<string, Route>, fallback?: Route): Promise<LoopbackSite> {
  const started = await startLoopbackSite(routes, fallback);
  sites.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(sites.splice(0).map((s) => s.close()));
});

describe('WebConnector: failures', () => {
  it('retries flaky 5xx; a page that keeps failing is failed, and no known page is taken for gone', async () => {
    const s = await site({
      '/docs/': home('flaky', 'broken', 'fine'),
      '/docs/flaky': statuses([[500], [502], [200]]),
      '/docs/broken': statuses([[500]]),
      '/docs/fine': answer(HTML, html('Fine', '<p>Fine.</p>')),
      '/docs/child': answer(HTML, html('Child', '<p>Linked from broken only.</p>')),
    });
    const known = new Map([
      ['broken.md', { version: 'v', uri: '', validators: { links: '/docs/child' } }],
      ['orphan.md', { version: 'v', uri: '' }],
    ]);
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext({ known }));
    expect(keysOf(result)).toEqual(['child.md', 'fine.md', 'flaky.md', 'index.md']);
    expect(s.hitsOf('/docs/flaky')).toHaveLength(3);
    expect(s.hitsOf('/docs/broken')).toHaveLength(3);
    expect(result.complete).toBe(true);
    expect(result.failed).toEqual([
      { key: 'broken.md', reason: 'HTTP 500' },
      {
        key: 'orphan.md',
        reason: 'not reached: a page linking to it may be among those that could not be read',
      },
    ]);
  });

  it('waits as long as 429 Retry-After asks, and fails a page that asks for too long', async () => {
    const s = await site({
      '/docs/': home('busy', 'closed'),
      '/docs/busy': statuses([[429, { 'Retry-After': '1' }], [200]]),
      '/docs/closed': statuses([[503, { 'Retry-After': '3600' }]]),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    const [refused, served] = s.hitsOf('/docs/busy');
    expect(served.at - refused.at).toBeGreaterThanOrEqual(1000);
    expect(keysOf(result)).toEqual(['busy.md', 'index.md']);
    expect(s.hitsOf('/docs/closed')).toHaveLength(1);
    expect(result.failed).toEqual([
      { key: 'closed.md', reason: 'HTTP 503, asked to retry after 3600 s' },
    ]);
  });

  it('follows redirects inside the scope, and skips those that leave it or lead to a refused address', async () => {
    let origin = '';
    const to =
      (location: () => string, status = 302): Route =>
      (_q, r) =>
        r.writeHead(status, { Location: location() }).end();
    const s = await site({
      '/docs/': home('old', 'alias', 'out', 'private', 'metadata', 'new'),
      '/docs/old': to(() => '/docs/new', 301),
      '/docs/alias': to(() => 'new'),
      '/docs/out': to(() => `${origin}/blog/post`),
      '/docs/private': to(() => 'http://10.0.0.1/admin'),
      '/docs/metadata': to(() => 'http://169.254.169.254/latest/meta-data/'),
      '/docs/new': answer(HTML, html('New', '<p>Moved here.</p>')),
    });
    origin = s.url;
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(keysOf(result)).toEqual(['index.md', 'new.md']);
    expect(item(result, 'new.md').uri).toBe(`${s.url}/docs/new`);
    expect(s.hitsOf('/docs/new')).toHaveLength(1);
    expect(s.hitsOf('/blog/post')).toEqual([]);
    expect(result.skipped).toEqual([
      { key: 'out.md', reason: `redirects out of scope, to ${s.url}/blog/post` },
      {
        key: 'private.md',
        reason: expect.stringMatching(
          /^redirects to http:\/\/10\.0\.0\.1\/admin: refused: 10\.0\.0\.1 is not a public address/,
        ),
      },
      {
        key: 'metadata.md',
        reason: expect.stringMatching(/refused: 169\.254\.169\.254 is a cloud metadata address/),
      },
    ]);
    expect(result.failed).toEqual([]);
  });

  it('refuses a site whose name resolves to a private address, naming it', async () => {
    const connector = aWebConnector(
      'http://docs.test/docs/',
      {},
      {
        resolver: (_name, done) => done(null, [{ address: '10.0.0.5', family: 4 }]),
      },
    );
    await expect(connector.enumerate(aContext())).rejects.toThrow(
      /robots\.txt could not be read: refused: docs\.test resolves to 10\.0\.0\.5 is not a public address/,
    );
  });

  it('skips a 50 MB page at the byte cap without reading it whole, declared or streamed', async () => {
    let written = 0;
    const endless: Route = (_request, response) => {
      response.writeHead(200, { 'Content-Type': HTML });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (written < 50 * MiB && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      pump();
    };
    const declared: Route = (_request, response) => {
      response.writeHead(200, { 'Content-Type': HTML, 'Content-Length': String(50 * MiB) });
      response.write('<p>');
    };
    const s = await site({
      '/docs/': home('huge', 'declared'),
      '/docs/huge': endless,
      '/docs/declared': declared,
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext({ maxBodyBytes: MiB }));
    expect(result.skipped).toEqual([
      { key: 'huge.md', reason: `larger than ${4 * MiB} bytes, the limit of a page` },
      { key: 'declared.md', reason: `larger than ${4 * MiB} bytes, the limit of a page` },
    ]);
    expect(written).toBeLessThan(16 * MiB);
  });

  it('ends a calendar of endless links: its query strings are one page, its paths stop at max_pages', async () => {
    const s = await site(
      {
        '/docs/': home('cal?month=1', 'days/1'),
        '/docs/cal': (request, response) => {
          const month = Number(new URL(request.url!, 'http://x').searchParams.get('month'));
          response
            .writeHead(200, { 'Content-Type': HTML })
            .end(
              html(
                'Cal',
                `<a href="?month=${month + 1}">next</a> <a href="?month=${month - 1}">prev</a>`,
              ),
            );
        },
      },
      (request, response) => {
        const day = Number(/\/days\/(\d+)/.exec(request.url!)?.[1]);
        const links = [1, 2, 3].map((d) => `<a href="/docs/days/${day * 3 + d}">${d}</a>`).join('');
        response.writeHead(200, { 'Content-Type': HTML }).end(html(`Day ${day}`, links));
      },
    );
    const started = performance.now();
    const result = await aWebConnector(`${s.url}/docs/`, { max_pages: 40 }).enumerate(aContext());
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(s.hitsOf('/docs/cal')).toHaveLength(1);
    expect(s.hitsOf('/docs/cal')[0].url).toBe('/docs/cal');
    expect(result.items).toHaveLength(40);
  });

  it('stops when the run has lasted its time, without taking what it did not reach for gone', async () => {
    // The first linked page answers after the run's time: whatever the machine's speed, the
    // run stops with it, before the pages after it.
    const late: Route = (request, response) => {
      setTimeout(() => answer(HTML, html('A', '<p>a</p>'))(request, response), 2_500);
    };
    const s = await site(
      { '/docs/': home('a', 'b', 'c', 'd'), '/docs/a': late },
      answer(HTML, html('X', '<p>x</p>')),
    );
    const known = new Map([['d.md', { version: 'v', uri: '' }]]);
    const result = await aWebConnector(`${s.url}/docs/`, {}, { maxRunMs: 2_000 }).enumerate(
      aContext({ known }),
    );
    expect(result.items.length).toBeLessThan(5);
    expect(result.failed).toContainEqual({
      key: 'd.md',
      reason: 'not reached: the run stopped after 2 s',
    });
  });

  it('says the start page was not reached, not gone, when the run stopped before it', async () => {
    const s = await site({ '/docs/': home('a') }, answer(HTML, html('X', '<p>x</p>')));
    await expect(
      aWebConnector(`${s.url}/docs/`, {}, { maxRunMs: 1 }).enumerate(aContext()),
    ).rejects.toThrow(`the start page ${s.url}/docs/ was not reached: the run stopped after`);
  });

  it('stops at once when the run is cancelled, throwing its reason', async () => {
    const s = await site({ '/docs/': home('slow'), '/docs/slow': () => undefined });
    const controller = new AbortController();
    const run = aWebConnector(`${s.url}/docs/`).enumerate(aContext({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('the server is stopping')), 300);
    const started = performance.now();
    await expect(run).rejects.toThrow('the server is stopping');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('WebConnector: what pages hold', () => {
  it('takes markdown when the site offers it for Accept: text/markdown, front matter and all', async () => {
    const s = await site({
      '/docs/': (request: http.IncomingMessage, response: http.ServerResponse) => {
        if (/text\/markdown/.test(request.headers.accept ?? '')) {
          response
            .writeHead(200, { 'Content-Type': 'text/markdown; charset=utf-8' })
            .end('---\ntitle: Home\ntags: [web]\nowner: docs\n---\n# Home\n\nSee [more](more).\n');
        } else
          response.writeHead(200, { 'Content-Type': HTML }).end(html('HTML home', '<p>html</p>'));
      },
      '/docs/more': answer('text/markdown', '# More\n'),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(item(result, 'index.md').document).toEqual({
      body: '# Home\n\nSee [more](more).\n',
      title: 'Home',
      tags: ['web'],
      metadata: { owner: 'docs' },
    });
    expect(keysOf(result)).toEqual(['index.md', 'more.md']);
  });

  it('reads text, DOCX and mislabelled markdown; skips images, JSON, pages asking noindex and text over the body limit', async () => {
    const memo = new Document({
      sections: [{ children: [new Paragraph('The memo mentions quokkas.')] }],
    });
    const s = await site({
      '/docs/': home('notes.txt', 'memo.docx', 'raw.md', 'logo.png', 'data', 'hidden', 'long.md'),
      '/docs/notes.txt': answer('text/plain', 'Plain notes.'),
      '/docs/memo.docx': answer(
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        await Packer.toBuffer(memo),
      ),
      '/docs/raw.md': answer('application/octet-stream', '# Raw\n'),
      '/docs/logo.png': answer('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])),
      '/docs/data': answer('application/json', '{"a":1}'),
      '/docs/hidden': answer(HTML, html('Hidden', '<p>x</p>'), { 'X-Robots-Tag': 'noindex' }),
      '/docs/long.md': answer('text/markdown', 'x'.repeat(20_000)),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(
      aContext({ maxBodyBytes: 10_000 }),
    );
    expect(keysOf(result)).toEqual(['index.md', 'memo.docx', 'notes.txt', 'raw.md']);
    expect(item(result, 'notes.txt').document).toEqual({ body: 'Plain notes.' });
    expect(item(result, 'memo.docx').document).toEqual({
      body: 'The memo mentions quokkas.',
      metadata: { source_type: 'docx' },
    });
    expect(item(result, 'raw.md').document?.body).toBe('# Raw\n');
    expect(result.skipped).toEqual([
      { key: 'logo.png.md', reason: 'not a page that is imported (image/png)' },
      { key: 'data.md', reason: 'not a page that is imported (application/json)' },
      { key: 'hidden.md', reason: 'the page asks not to be indexed (X-Robots-Tag: noindex)' },
      { key: 'long.md', reason: 'its text is 20000 bytes, over the body limit of 10000' },
    ]);
  });

  it('decodes invalid UTF-8 with replacement characters, and other charsets by their name', async () => {
    const s = await site({
      '/docs/': home('bad.md', 'latin'),
      '/docs/bad.md': answer('text/markdown', Buffer.from([0x4f, 0x4b, 0x20, 0xff, 0xfe, 0x21])),
      '/docs/latin': answer(
        'text/html; charset=iso-8859-1',
        Buffer.from('<html><body><p>caf\xe9</p></body></html>', 'latin1'),
      ),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(item(result, 'bad.md').document?.body).toBe('OK \ufffd\ufffd!');
    expect(item(result, 'latin.md').document?.body).toBe('café');
  });

  it('reads a page once whatever the spelling of its URL: tracking parameters, fragments, dot segments, canonical links', async () => {
    const s = await site({
      '/docs/': home(
        'page?utm_source=news',
        'page?b=2&a=1',
        'page#part',
        './sub/../page',
        '/docs//page',
        'print',
      ),
      '/docs/page': answer(HTML, html('Page', '<p>The page.</p>')),
      '/docs/print': answer(
        HTML,
        '<html><head><link rel="canonical" href="/docs/page"></head><body><p>Print view.</p></body></html>',
      ),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(keysOf(result)).toEqual(['index.md', 'page.md']);
    expect(s.hitsOf('/docs/page').map((hit) => hit.url)).toEqual(['/docs/page']);
  });

  it('keeps the main content of a page, not its navigation, header, footer or side bar', async () => {
    const s = await site({
      '/docs/': answer(
        HTML,
        html(
          'Tokens | Docs',
          `<header><a href="/docs/">Docs</a> Site header</header><nav><a href="a">Nav A</a></nav>
           <aside>Related pages</aside><main><h1>Tokens</h1><p>Create a token.</p></main>
           <footer>Copyright footer</footer>`,
        ),
      ),
      '/docs/a': answer(HTML, html('A', '<p>A.</p>')),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(item(result, 'index.md').document).toMatchObject({
      title: 'Tokens',
      body: '# Tokens\n\nCreate a token.',
    });
    // Navigation is not content, but it is how the crawl finds pages.
    expect(keysOf(result)).toEqual(['a.md', 'index.md']);
  });

  it('sends one request at a time to a host, never two closer than the interval', async () => {
    const s = await site(
      { '/docs/': home('a', 'b', 'c', 'd') },
      answer(HTML, html('X', '<p>x</p>')),
    );
    await aWebConnector(`${s.url}/docs/`, {}, { minIntervalMs: 100 }).enumerate(aContext());
    const gaps = s.hits.slice(1).map((hit, n) => hit.at - s.hits[n].at);
    expect(s.hits.length).toBeGreaterThan(8);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
    expect(s.maxInFlight).toBe(1);
  });
});
