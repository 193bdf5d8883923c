import { gzipSync } from 'node:zlib';
import { retryAfterMs } from './site-client';
import { markdownLinks, sitemapEntries } from './site-map';

describe('sitemapEntries', () => {
  it('reads the pages of a urlset and the children of an index, XML entities decoded', () => {
    const urlset = `<?xml version="1.0" encoding="UTF-8"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <url><loc> https://docs.x/a?b=1&amp;c=2 </loc><lastmod>2025-01-01</lastmod></url>
        <url><loc>https://docs.x/caf&#xE9;</loc><image:image><image:loc>https://docs.x/i.png</image:loc></image:image></url>
      </urlset>`;
    expect(sitemapEntries(Buffer.from(urlset), 1 << 20)).toEqual({
      pages: ['https://docs.x/a?b=1&c=2', 'https://docs.x/café'],
      sitemaps: [],
    });
    const index = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://docs.x/s1.xml</loc></sitemap></sitemapindex>`;
    expect(sitemapEntries(gzipSync(index), 1 << 20)).toEqual({
      pages: [],
      sitemaps: ['https://docs.x/s1.xml'],
    });
  });

  it('expands no entity a DOCTYPE declares', () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
      <urlset><url><loc>https://docs.x/&b;</loc></url></urlset>`;
    expect(sitemapEntries(Buffer.from(laughs), 1 << 20).pages).toEqual(['https://docs.x/&b;']);
  });

  it('refuses a gzip bomb and what is not a sitemap', () => {
    expect(() => sitemapEntries(gzipSync(Buffer.alloc(4 << 20, ' ')), 1 << 20)).toThrow(
      `larger than ${1 << 20} bytes once unzipped`,
    );
    expect(() =>
      sitemapEntries(Buffer.from('<html><body>Not found</body></html>'), 1 << 20),
    ).toThrow('not a sitemap');
  });
});

describe('markdownLinks', () => {
  it('finds inline and reference links, titles and angle brackets aside', () => {
    const text = [
      '# Docs',
      '- [Alpha](https://docs.x/alpha.md): first',
      '- [Beta](</docs/beta> "Beta page")',
      '![img](/i.png)',
      '[ref]: https://docs.x/ref',
    ].join('\n');
    expect(markdownLinks(text)).toEqual([
      'https://docs.x/alpha.md',
      '/docs/beta',
      '/i.png',
      'https://docs.x/ref',
    ]);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2025-07-01T10:00:00Z');
  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Tue, 01 Jul 2025 10:00:30 GMT', 30_000],
    ['Tue, 01 Jul 2025 09:00:00 GMT', 0],
    ['soon', null],
    [undefined, null],
  ])('reads %p as %p ms', (value, expected) => {
    expect(retryAfterMs(value, now)).toBe(expected);
  });
});
