import type http from 'node:http';
import { gzipSync } from 'node:zlib';
import {
  answer,
  html,
  type LoopbackSite,
  type Route,
  startLoopbackSite,
} from '../../../../test/support/loopback-site';
import { aContext, aWebConnector, keysOf, knownAfter } from '../../../../test/support/web-source';
import type { Enumeration } from '../connector';

const HTML = 'text/html; charset=utf-8';

/** A page answering 304 when asked with its current ETag. */
function withEtag(page: { body: string; etag: string }): Route {
  return (request, response) => {
    if (request.headers['if-none-match'] === page.etag) {
      response.writeHead(304, { ETag: page.etag }).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': HTML, ETag: page.etag }).end(page.body);
  };
}

/** Requests for pages, not for robots.txt, llms.txt or sitemaps. */
function pageHits(s: LoopbackSite) {
  return s.hits.filter((hit) => !/\/(robots\.txt|llms(-full)?\.txt|sitemap\.xml)$/.test(hit.path));
}

function item(enumeration: Enumeration, key: string) {
  const found = enumeration.items.find((entry) => entry.key === key);
  if (!found) throw new Error(`no item ${key} in ${keysOf(enumeration).join(', ')}`);
  return found;
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

describe('WebConnector: a walk of links', () => {
  it('reads the pages linked inside the scope, one document each, keyed by their path under it', async () => {
    const s = await site({
      '/docs/': answer(
        HTML,
        html(
          'Docs home',
          `<main><h1>Welcome</h1><p>Start with <a href="guide/setup">setup</a>, the
          <a href="guide/">guide</a>, <a href="page.html#part">a page</a>, <a href="/blog/post">the blog</a>,
          <a href="https://elsewhere.example/">elsewhere</a> or <a href="mailto:a@b.c">mail</a>.</p></main>`,
        ),
      ),
      '/docs/guide/': answer(
        HTML,
        html('Guide', '<main><h1>Guide</h1><a href="../page.html">Page</a></main>'),
      ),
      '/docs/guide/setup': answer(
        HTML,
        html('Setup', '<main><h1>Set up</h1><p>Run it.</p></main>'),
      ),
      '/docs/page.html': answer(HTML, html('A page', '<main><p>Text of the page.</p></main>')),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());

    expect(result.complete).toBe(true);
    expect(keysOf(result)).toEqual(['guide/index.md', 'guide/setup.md', 'index.md', 'page.md']);
    expect(result.failed).toEqual([]);
    expect(result.skipped).toEqual([]);
    expect(item(result, 'guide/setup.md')).toMatchObject({
      uri: `${s.url}/docs/guide/setup`,
      document: { title: 'Set up', body: '# Set up\n\nRun it.', metadata: { source_type: 'html' } },
    });
    expect(item(result, 'index.md').document?.body).toContain(`[setup](${s.url}/docs/guide/setup)`);
    expect(s.hitsOf('/blog/post')).toEqual([]);
    expect(s.hitsOf('/docs/page.html')).toHaveLength(1);
    const page = s.hitsOf('/docs/guide/setup')[0];
    expect(page.headers.accept).toBe('text/markdown, text/html;q=0.9, */*;q=0.1');
    expect(page.headers['user-agent']).toBe('agent-data-sources/1.0');
    expect(result.version).toBe(`4 pages linked from ${s.url}/docs/`);
  });

  it('asks again with If-None-Match: a 304 gives the item back with its version and no document', async () => {
    const pages = {
      home: { etag: '"home-1"', body: html('Home', '<main><a href="a">A</a></main>') },
      a: { etag: '"a-1"', body: html('A', '<main><p>A links to <a href="b">B</a>.</p></main>') },
      b: { etag: '"b-1"', body: html('B', '<main><p>Only A links here.</p></main>') },
    };
    const s = await site({
      '/docs/': withEtag(pages.home),
      '/docs/a': withEtag(pages.a),
      '/docs/b': withEtag(pages.b),
    });
    const connector = aWebConnector(`${s.url}/docs/`);
    const first = await connector.enumerate(aContext());
    expect(item(first, 'a.md')).toMatchObject({
      version: 'etag:"a-1"',
      validators: { etag: '"a-1"', links: '/docs/b' },
    });
    expect(first.items.every((entry) => entry.document !== undefined)).toBe(true);

    s.hits.length = 0;
    const second = await connector.enumerate(aContext({ known: knownAfter(first) }));
    expect(second.complete).toBe(true);
    expect(keysOf(second)).toEqual(['a.md', 'b.md', 'index.md']);
    for (const entry of second.items) {
      expect(entry.version).toBe(item(first, entry.key).version);
      expect(entry.document).toBeUndefined();
    }
    // B is reached again although A, which links to it, answered 304: A's links were kept.
    expect(pageHits(s).map((hit) => hit.headers['if-none-match'])).toEqual([
      '"home-1"',
      '"a-1"',
      '"b-1"',
    ]);

    pages.b.etag = '"b-2"';
    pages.b.body = html('B', '<main><p>B has changed.</p></main>');
    const third = await connector.enumerate(aContext({ known: knownAfter(second) }));
    expect(item(third, 'b.md')).toMatchObject({
      version: 'etag:"b-2"',
      document: { body: 'B has changed.' },
    });
    expect(item(third, 'a.md').document).toBeUndefined();
    // An unchanged item can still be read, should the reconciliation need its document.
    await expect(item(third, 'a.md').load!()).resolves.toMatchObject({ title: 'A' });
  });

  it('asks again with If-Modified-Since when the site gives Last-Modified only', async () => {
    const modified = 'Tue, 01 Jul 2025 10:00:00 GMT';
    const s = await site({
      '/docs/': (request: http.IncomingMessage, response: http.ServerResponse) => {
        if (request.headers['if-modified-since'] === modified)
          return void response.writeHead(304).end();
        response
          .writeHead(200, { 'Content-Type': HTML, 'Last-Modified': modified })
          .end(html('Home', '<p>Home.</p>'));
      },
    });
    const connector = aWebConnector(`${s.url}/docs/`);
    const first = await connector.enumerate(aContext());
    expect(item(first, 'index.md')).toMatchObject({
      version: `modified:${modified}`,
      validators: { last_modified: modified, links: '' },
    });
    const second = await connector.enumerate(aContext({ known: knownAfter(first) }));
    expect(s.hitsOf('/docs/')[1].headers['if-modified-since']).toBe(modified);
    expect(item(second, 'index.md')).toMatchObject({ version: `modified:${modified}` });
    expect(item(second, 'index.md').document).toBeUndefined();
  });

  it("versions a page without validators by its document's hash, and holds no document when it is unchanged", async () => {
    let text = 'First text.';
    const s = await site({
      '/docs/': (_q, r) =>
        r
          .writeHead(200, { 'Content-Type': HTML })
          .end(html('T', `<p>${text}</p><script>n=${Math.random()}</script>`)),
    });
    const connector = aWebConnector(`${s.url}/docs/`);
    const first = await connector.enumerate(aContext());
    const again = await connector.enumerate(aContext({ known: knownAfter(first) }));
    expect(item(first, 'index.md').version).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(item(again, 'index.md').version).toBe(item(first, 'index.md').version);
    expect(item(again, 'index.md').document).toBeUndefined();
    text = 'Second text.';
    const changed = await connector.enumerate(aContext({ known: knownAfter(again) }));
    expect(item(changed, 'index.md').version).not.toBe(item(first, 'index.md').version);
    expect(item(changed, 'index.md').document?.body).toBe('Second text.');
  });

  it('leaves out pages answering 404 and 410, so that a complete enumeration deletes them', async () => {
    const s = await site({
      '/docs/': answer(
        HTML,
        html(
          'Home',
          '<a href="gone">gone</a> <a href="removed">removed</a> <a href="here">here</a>',
        ),
      ),
      '/docs/here': answer(HTML, html('Here', '<p>Still here.</p>')),
      '/docs/removed': (_q, r) => r.writeHead(410).end(),
    });
    const known = new Map(
      ['gone.md', 'removed.md', 'here.md'].map((key) => [key, { version: 'v', uri: '' }]),
    );
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext({ known }));
    expect(result.complete).toBe(true);
    expect(keysOf(result)).toEqual(['here.md', 'index.md']);
    expect(result.failed).toEqual([]);
    expect(result.skipped).toEqual([]);
  });

  it('stops at max_pages, and does not take the known pages beyond it for gone', async () => {
    const chain: Record<string, Route> = {};
    for (let n = 0; n < 10; n++) {
      chain[n === 0 ? '/docs/' : `/docs/p${n}`] = answer(
        HTML,
        html(`P${n}`, `<p>Page ${n}</p><a href="/docs/p${n + 1}">next</a>`),
      );
    }
    const s = await site(chain);
    const known = new Map([['p8.md', { version: 'v', uri: '' }]]);
    const result = await aWebConnector(`${s.url}/docs/`, { max_pages: 4 }).enumerate(
      aContext({ known }),
    );
    expect(keysOf(result)).toEqual(['index.md', 'p1.md', 'p2.md', 'p3.md']);
    expect(pageHits(s)).toHaveLength(4);
    expect(result.failed).toEqual([
      { key: 'p8.md', reason: 'not reached: more pages in scope than max_pages (4)' },
    ]);
  });

  it('stops at max_depth', async () => {
    const s = await site({}, (request, response) => {
      const n = Number(/^\/docs\/cal\/(\d+)$/.exec(request.url ?? '')?.[1] ?? 0);
      response
        .writeHead(200, { 'Content-Type': HTML })
        .end(html(`Month ${n}`, `<p>Month ${n}</p><a href="/docs/cal/${n + 1}">next</a>`));
    });
    const result = await aWebConnector(`${s.url}/docs/cal/`, { max_depth: 3 }).enumerate(
      aContext(),
    );
    expect(pageHits(s).map((hit) => hit.path)).toEqual([
      '/docs/cal/',
      '/docs/cal/1',
      '/docs/cal/2',
      '/docs/cal/3',
    ]);
    expect(keysOf(result)).toEqual(['1.md', '2.md', '3.md', 'index.md']);
  });

  it('asks for a page whole every run when its links are too many to keep', async () => {
    const long = 'a-section-with-a-long-name/'.repeat(7);
    const links = Array.from({ length: 100 }, (_, n) => `<a href="/docs/${long}${n}">${n}</a>`);
    const hub = { etag: '"hub-1"', body: html('Hub', links.join(' ')) };
    const s = await site({ '/docs/': withEtag(hub) }, answer(HTML, html('Leaf', '<p>Leaf.</p>')));
    const connector = aWebConnector(`${s.url}/docs/`, { max_pages: 3 });
    const first = await connector.enumerate(aContext());
    expect(item(first, 'index.md').validators).toEqual({ etag: '"hub-1"' });
    await connector.enumerate(aContext({ known: knownAfter(first) }));
    expect(s.hitsOf('/docs/').map((hit) => hit.headers['if-none-match'])).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('follows the links of a page that asks not to be indexed, unless it says nofollow', async () => {
    const s = await site({
      '/docs/': answer(
        HTML,
        '<html><head><meta name="robots" content="noindex, follow"></head><body><a href="a">a</a></body></html>',
      ),
      '/docs/a': answer(
        HTML,
        '<html><head><meta name="robots" content="nofollow"></head><body><p>A.</p><a href="b">b</a></body></html>',
      ),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(keysOf(result)).toEqual(['a.md']);
    expect(result.skipped).toEqual([
      { key: 'index.md', reason: 'the page asks not to be indexed (meta robots: noindex)' },
    ]);
    expect(s.hitsOf('/docs/b')).toEqual([]);
  });

  it('refuses to call a site empty when its start page is gone', async () => {
    const s = await site({});
    await expect(aWebConnector(`${s.url}/docs/`).enumerate(aContext())).rejects.toThrow(
      `nothing to crawl: the start page ${s.url}/docs/ is gone (HTTP 404 or 410)`,
    );
  });
});

describe("WebConnector: the site's own list of pages", () => {
  it('reads the pages of the sitemaps robots.txt names (an index, a gzipped child) instead of following links', async () => {
    const urlset = (locs: string[]) =>
      `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc></url>`).join('')}</urlset>`;
    let origin = '';
    const s = await site({
      '/robots.txt': (_q, r) =>
        r
          .writeHead(200, { 'Content-Type': 'text/plain' })
          .end(`User-agent: *\nAllow: /\nSitemap: ${origin}/maps/index.xml\n`),
      '/maps/index.xml': (_q, r) =>
        r
          .writeHead(200, { 'Content-Type': 'application/xml' })
          .end(
            `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/maps/a.xml</loc></sitemap><sitemap><loc>${origin}/maps/b.xml.gz</loc></sitemap></sitemapindex>`,
          ),
      '/maps/a.xml': (_q, r) =>
        r
          .writeHead(200, { 'Content-Type': 'application/xml' })
          .end(
            urlset([
              `${origin}/docs/a`,
              `${origin}/docs/b?lang=en&amp;v=2`,
              `${origin}/shop/x`,
              `${origin}/docs/a?utm_source=feed`,
            ]),
          ),
      '/maps/b.xml.gz': (_q, r) =>
        r
          .writeHead(200, { 'Content-Type': 'application/gzip' })
          .end(gzipSync(urlset([`${origin}/docs/c`]))),
      '/docs/': answer(HTML, html('Home', '<a href="/docs/linked-only">not listed</a>')),
      '/docs/a': answer(HTML, html('A', '<p>A</p>')),
      '/docs/b': answer(HTML, html('B', '<p>B</p>')),
      '/docs/c': answer(HTML, html('C', '<p>C</p>')),
    });
    origin = s.url;
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(result.complete).toBe(true);
    expect(result.version).toBe(`4 pages listed by ${s.url}/maps/index.xml`);
    const keys = keysOf(result);
    expect(keys).toContain('a.md');
    expect(keys).toContain('c.md');
    expect(keys).toContain('index.md');
    expect(keys.find((key) => /^b-[0-9a-f]{10}\.md$/.test(key))).toBeDefined();
    expect(keys).toHaveLength(4);
    expect(s.hitsOf('/docs/b')[0].url).toBe('/docs/b?lang=en&v=2');
    expect(s.hitsOf('/docs/a')).toHaveLength(1);
    expect(s.hitsOf('/docs/linked-only')).toEqual([]);
    expect(s.hitsOf('/shop/x')).toEqual([]);
  });

  it('prefers llms.txt at the scope, markdown pages included', async () => {
    const s = await site({
      '/docs/llms.txt': (_q, r) =>
        r
          .writeHead(200, { 'Content-Type': 'text/plain' })
          .end(
            `# Docs\n\n> All of it.\n\n## Pages\n\n- [Alpha](${sUrl()}/docs/alpha.md): the first\n- [Beta](/docs/beta)\n- [Out](/elsewhere/x)\n`,
          ),
      '/sitemap.xml': answer(
        'application/xml',
        '<urlset><url><loc>/docs/never</loc></url></urlset>',
      ),
      '/docs/': answer(HTML, html('Home', '<p>Home</p>')),
      '/docs/alpha.md': answer('text/markdown', '---\ntitle: Alpha\ntags: [a]\n---\n# Alpha\n'),
      '/docs/beta': answer(HTML, html('Beta', '<p>Beta</p>')),
    });
    const sUrl = () => s.url;
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(keysOf(result)).toEqual(['alpha.md', 'beta.md', 'index.md']);
    expect(item(result, 'alpha.md').document).toEqual({
      body: '# Alpha\n',
      title: 'Alpha',
      tags: ['a'],
      metadata: {},
    });
    expect(result.version).toBe(`3 pages listed by ${s.url}/docs/llms.txt`);
    expect(s.hitsOf('/sitemap.xml')).toEqual([]);
    expect(s.hitsOf('/elsewhere/x')).toEqual([]);
  });

  it('honours robots.txt: Disallow for everyone, and Crawl-delay as the least interval', async () => {
    const s = await site({
      '/robots.txt': answer(
        'text/plain',
        'User-agent: *\nDisallow: /docs/secret\nCrawl-delay: 0.15\n',
      ),
      '/docs/': answer(
        HTML,
        html('Home', '<a href="secret/plans">plans</a> <a href="open">open</a>'),
      ),
      '/docs/open': answer(HTML, html('Open', '<p>Open.</p>')),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(keysOf(result)).toEqual(['index.md', 'open.md']);
    expect(result.skipped).toEqual([
      { key: 'secret/plans.md', reason: `${s.url}/docs/secret/plans is disallowed by robots.txt` },
    ]);
    expect(s.hits.map((hit) => hit.path)).not.toContain('/docs/secret/plans');
    const gaps = s.hits.slice(1).map((hit, n) => hit.at - s.hits[n].at);
    expect(Math.min(...gaps.slice(1))).toBeGreaterThanOrEqual(150);
  });

  it('follows the group of robots.txt that names it, not the others', async () => {
    const s = await site({
      '/robots.txt': answer(
        'text/plain',
        'User-agent: agent-data-sources\nDisallow: /docs/private\n\nUser-agent: *\nDisallow: /\n',
      ),
      '/docs/': answer(
        HTML,
        html('Home', '<a href="private">private</a> <a href="public">public</a>'),
      ),
      '/docs/public': answer(HTML, html('Public', '<p>Public.</p>')),
    });
    const result = await aWebConnector(`${s.url}/docs/`).enumerate(aContext());
    expect(keysOf(result)).toEqual(['index.md', 'public.md']);
    expect(result.skipped.map((entry) => entry.key)).toEqual(['private.md']);
    expect(s.hitsOf('/docs/private')).toEqual([]);
  });
});
