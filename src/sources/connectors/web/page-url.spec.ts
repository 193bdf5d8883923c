import { canonicalUrl, Scope } from './page-url';

describe('canonicalUrl', () => {
  it.each([
    ['HTTP://Docs.Example.COM:80/a/./b/../c#frag', 'http://docs.example.com/a/c'],
    ['https://docs.example.com:443/a//b///c', 'https://docs.example.com/a/b/c'],
    [
      'https://docs.example.com/%7euser/%41%2f%e2%82%ac',
      'https://docs.example.com/~user/A%2F%E2%82%AC',
    ],
    [
      'https://docs.example.com/p?utm_source=x&b=2&a=1&gclid=9&a=0',
      'https://docs.example.com/p?a=0&a=1&b=2',
    ],
    ['https://docs.example.com/p?utm_medium=y', 'https://docs.example.com/p'],
  ])('keeping the query: %s → %s', (raw, expected) => {
    expect(canonicalUrl(raw, undefined, 'keep')?.href).toBe(expected);
  });

  it('drops the query of links found in pages, and resolves them against their page', () => {
    const page = new URL('https://docs.example.com/guide/intro');
    expect(canonicalUrl('../cal?month=13#top', page, 'drop')?.href).toBe(
      'https://docs.example.com/cal',
    );
    expect(canonicalUrl('setup', page, 'drop')?.href).toBe('https://docs.example.com/guide/setup');
  });

  it.each([
    ['mailto:a@b.c'],
    ['javascript:void(0)'],
    ['ftp://x/y'],
    ['https://user:pw@x/'],
    ['http://[::1'],
  ])('refuses %s', (raw) => {
    expect(canonicalUrl(raw, undefined, 'keep')).toBeNull();
  });
});

describe('Scope', () => {
  const key = (scope: Scope, raw: string) => {
    const result = scope.keyOf(canonicalUrl(raw, undefined, 'keep')!);
    return 'key' in result ? result.key : `(${result.reason})`;
  };

  it.each([
    ['https://docs.x/api/', 'index.md'],
    ['https://docs.x/api/auth/tokens', 'auth/tokens.md'],
    ['https://docs.x/api/auth/', 'auth/index.md'],
    ['https://docs.x/api/auth/index.html', 'auth/index.md'],
    ['https://docs.x/api/page.HTML', 'page.md'],
    ['https://docs.x/api/list.php', 'list.md'],
    ['https://docs.x/api/notes.md', 'notes.md'],
    ['https://docs.x/api/notes.txt', 'notes.txt'],
    ['https://docs.x/api/spec.pdf', 'spec.pdf'],
    ['https://docs.x/api/v1.2', 'v1.2.md'],
    ['https://docs.x/api/caf%C3%A9/cr%C3%A8me', 'café/crème.md'],
    ['https://docs.x/api/a%2Fb', 'a%2Fb.md'],
    ['https://docs.x/api/a%5Cb', 'a%5Cb.md'],
    ['https://docs.x/api/bad%FF', 'bad%FF.md'],
  ])('keys %s as %s', (url, expected) => {
    expect(key(new Scope('https://docs.x/api/'), url)).toBe(expected);
  });

  it('puts a query that survived into the key, the same query always the same key', () => {
    const scope = new Scope('https://docs.x/api/');
    const one = key(scope, 'https://docs.x/api/list?b=2&a=1');
    expect(one).toMatch(/^list-[0-9a-f]{10}\.md$/);
    expect(key(scope, 'https://docs.x/api/list?a=1&b=2&utm_campaign=z')).toBe(one);
    expect(key(scope, 'https://docs.x/api/list?a=1&b=3')).not.toBe(one);
    expect(key(scope, 'https://docs.x/api/?page=2')).toMatch(/^index-[0-9a-f]{10}\.md$/);
  });

  it('scopes whole segments under the start URL, its folder when it names a page', () => {
    const bare = new Scope('https://docs.x/api');
    expect(bare.folder).toBe('/api/');
    expect(key(bare, 'https://docs.x/api')).toBe('index.md');
    expect(key(bare, 'https://docs.x/api/x')).toBe('x.md');
    expect(bare.contains(new URL('https://docs.x/apiary/x'))).toBe(false);
    expect(bare.contains(new URL('http://docs.x/api/x'))).toBe(false);
    expect(bare.contains(new URL('https://other.x/api/x'))).toBe(false);

    const page = new Scope('https://docs.x/guide/index.html');
    expect(page.folder).toBe('/guide/');
    expect(key(page, 'https://docs.x/guide/index.html')).toBe('index.md');
    expect(key(page, 'https://docs.x/guide/setup.html')).toBe('setup.md');
    expect(key(page, 'https://docs.x/other')).toMatch(/is outside/);
  });

  it('refuses a key over 512 bytes', () => {
    const scope = new Scope('https://docs.x/');
    expect(key(scope, `https://docs.x/${'a'.repeat(600)}`)).toMatch(/over 512/);
  });
});
