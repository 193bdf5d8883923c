import { type PageContent, readPage } from './page-content';

const URL_ = new URL('https://docs.example.com/guide/tokens');

async function read(contentType: string, body: string | Buffer, robotsTag?: string) {
  return readPage({
    url: URL_,
    contentType,
    body: typeof body === 'string' ? Buffer.from(body) : body,
    robotsTag,
  });
}

async function content(contentType: string, body: string): Promise<PageContent> {
  const result = await read(contentType, body);
  if ('skipped' in result) throw new Error(`skipped: ${result.skipped}`);
  return result;
}

const SENTENCE = 'Tokens authenticate every call to the API, and each one carries its scopes. ';
const ARTICLE = `<p>${SENTENCE.repeat(6)}</p><h2>Rotating</h2><p>${SENTENCE.repeat(6)}</p>`;

describe('readPage: HTML', () => {
  it('keeps <main>, dropping the site header, navigation, side bar, footer, scripts and forms', async () => {
    const page = await content(
      'text/html',
      `<!doctype html><html><head><title>Tokens | Docs</title><script>track()</script></head><body>
       <header><a href="/">Logo</a> Site header</header>
       <nav><a href="/guide/setup">Setup</a></nav>
       <aside>Related: <a href="/guide/keys">Keys</a></aside>
       <main><article><header><h1>Tokens</h1></header><p>Use a <a href="../api/x">token</a>.</p>
       <aside>Note: tokens expire.</aside><form><input name="q"></form></article></main>
       <footer>Footer © 2025</footer></body></html>`,
    );
    expect(page.document).toEqual({
      title: 'Tokens',
      body: '# Tokens\n\nUse a [token](https://docs.example.com/api/x).\n\nNote: tokens expire.',
      metadata: { source_type: 'html' },
    });
    expect(page.links).toEqual([
      'https://docs.example.com/',
      'https://docs.example.com/guide/setup',
      'https://docs.example.com/guide/keys',
      'https://docs.example.com/api/x',
    ]);
  });

  it('finds the content with Readability when the page marks no <main>', async () => {
    const page = await content(
      'text/html',
      `<html><head><title>Tokens - Docs</title></head><body>
       <div class="topbar"><a href="/">Home</a> | <a href="/blog">Blog</a></div>
       <div role="navigation"><a href="/a">A</a></div>
       <div class="content"><h1>Tokens</h1>${ARTICLE}</div>
       <div id="footer">Footer text</div></body></html>`,
    );
    expect(page.document.title).toBe('Tokens');
    expect(page.document.body).toContain('## Rotating');
    expect(page.document.body).toContain(SENTENCE.trim());
    expect(page.document.body).not.toMatch(/Home|Blog|Footer text/);
  });

  it('reads a fragment without <html>, <head> or <body>', async () => {
    const page = await content(
      'text/html',
      '<title>Bare</title><h1>Bare</h1><p>Just a fragment.</p>',
    );
    // Readability gives the heading that repeats the title as the title, not in the body.
    expect(page.document).toMatchObject({ title: 'Bare', body: 'Just a fragment.' });
  });

  it('resolves links against <base>, skips nofollow ones, and reads the canonical link', async () => {
    const page = await content(
      'text/html',
      `<html><head><base href="https://docs.example.com/v2/"><link rel="canonical" href="tokens-latest">
       </head><body><main><p><a href="a">a</a> <a rel="nofollow" href="b">b</a> <a href="#x">x</a>
       <a href="mailto:a@b.c">m</a></p></main></body></html>`,
    );
    expect(page.links).toEqual(['https://docs.example.com/v2/a', 'https://docs.example.com/v2/#x']);
    expect(page.canonical).toBe('https://docs.example.com/v2/tokens-latest');
  });

  it('honours meta robots and X-Robots-Tag: noindex skips the page, nofollow keeps its links from the crawl', async () => {
    expect(
      await read(
        'text/html',
        '<html><head><meta name="robots" content="noindex"></head><body><a href="/x">x</a></body></html>',
      ),
    ).toEqual({
      skipped: 'the page asks not to be indexed (meta robots: noindex)',
      links: ['https://docs.example.com/x'],
    });
    const page = await content(
      'text/html',
      '<html><head><meta name="ROBOTS" content="nofollow"></head><body><p><a href="/x">x</a></p></body></html>',
    );
    expect(page.links).toEqual([]);
    expect(await read('text/html', '<p><a href="/x">x</a></p>', 'none')).toEqual({
      skipped: 'the page asks not to be indexed (X-Robots-Tag: noindex)',
      links: [],
    });
    expect(await read('text/markdown', '[x](/x)', 'noindex')).toEqual({
      skipped: 'the page asks not to be indexed (X-Robots-Tag: noindex)',
      links: ['https://docs.example.com/x'],
    });
  });

  it('decodes by the charset of Content-Type or <meta charset>, bad UTF-8 as U+FFFD', async () => {
    const latin = Buffer.from(
      '<html><head><meta charset="iso-8859-1"></head><body><p>caf\xe9 cr\xe8me</p></body></html>',
      'latin1',
    );
    expect((await content('text/html', latin as unknown as string)).document.body).toBe(
      'café crème',
    );
    const bad = Buffer.concat([
      Buffer.from('<p>ok '),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('</p>'),
    ]);
    expect((await content('text/html', bad as unknown as string)).document.body).toBe('ok \ufffd(');
  });
});

describe('readPage: other types', () => {
  it('takes markdown as it is, front matter giving title, tags and metadata, and its links', async () => {
    const page = await content(
      'text/markdown; charset=utf-8',
      '---\ntitle: Tokens\ntags: [auth]\nlevel: 2\n---\n# Tokens\n\nSee [keys](keys) and [ref].\n\n[ref]: /guide/ref "Ref"\n',
    );
    expect(page.document).toEqual({
      title: 'Tokens',
      tags: ['auth'],
      metadata: { level: 2 },
      body: '# Tokens\n\nSee [keys](keys) and [ref].\n\n[ref]: /guide/ref "Ref"\n',
    });
    expect(page.links).toEqual([
      'https://docs.example.com/guide/keys',
      'https://docs.example.com/guide/ref',
    ]);
  });

  it('fails markdown whose front matter is broken, naming the problem', async () => {
    await expect(read('text/markdown', '---\ntitle: [unclosed\n---\nbody')).rejects.toThrow(
      /invalid front matter/,
    );
  });

  it('skips binaries, unknown types and text that is binary', async () => {
    expect(await read('image/png', Buffer.from([0x89, 0x50]))).toEqual({
      skipped: 'not a page that is imported (image/png)',
    });
    expect(await read('', Buffer.from([0x00, 0x01, 0x02]))).toEqual({
      skipped: 'not a page that is imported (application/octet-stream)',
    });
    expect(await read('text/plain', Buffer.from('a\u0000b'))).toEqual({
      skipped: 'binary data served as text/plain',
    });
  });

  it('sniffs a page served without a type', async () => {
    expect(await content('', '<!DOCTYPE html><title>T</title><p>Sniffed.</p>')).toMatchObject({
      document: { title: 'T', body: 'Sniffed.' },
    });
  });
});
