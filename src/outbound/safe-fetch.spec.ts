import { answer, type LoopbackSite, startLoopbackSite } from '../../test/support/loopback-site';
import { AddressPolicy } from './address-policy';
import { SafeFetcher } from './safe-fetch';
import { UrlPolicy } from './url-policy';

describe('SafeFetcher.request', () => {
  let site: LoopbackSite;
  let fetcher: SafeFetcher;
  beforeAll(async () => {
    site = await startLoopbackSite({
      '/page': (request, response) => {
        if (request.headers['if-none-match'] === '"v1"') return void response.writeHead(304).end();
        response.writeHead(200, { 'Content-Type': 'text/plain', ETag: '"v1"' }).end('hello');
      },
      '/busy': answer('text/plain', 'slow down', { 'Retry-After': '7' }, 429),
      '/moved': (_request, response) => response.writeHead(301, { Location: '/page' }).end(),
      '/metadata': (_request, response) =>
        response.writeHead(302, { Location: 'http://169.254.169.254/' }).end(),
      '/big': answer('text/plain', 'x'.repeat(2000)),
    });
    fetcher = new SafeFetcher(new UrlPolicy('any', true, new AddressPolicy(['127.0.0.0/8'])), {
      timeoutMs: 2000,
      maxBytes: 1000,
      maxRedirects: 5,
    });
  });
  afterAll(() => site.close());

  it("sends the caller's headers over the defaults, but keeps its own Accept-Encoding", async () => {
    const response = await fetcher.request(`${site.url}/page`, {
      headers: { 'User-Agent': 'agent-data-sources/1.0', 'Accept-Encoding': 'zstd' },
    });
    expect(response).toMatchObject({ status: 200, contentType: 'text/plain' });
    expect(response.headers.etag).toBe('"v1"');
    expect(response.body.toString()).toBe('hello');
    const sent = site.hitsOf('/page').at(-1)!.headers;
    expect(sent['user-agent']).toBe('agent-data-sources/1.0');
    expect(sent['accept-encoding']).toBe('gzip, deflate, br');
    expect(sent.accept).toMatch(/text\/html/);
  });

  it('answers a 304 and a 429 with their status and headers instead of throwing', async () => {
    const unchanged = await fetcher.request(`${site.url}/page`, {
      headers: { 'If-None-Match': '"v1"' },
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body.length).toBe(0);
    const busy = await fetcher.request(`${site.url}/busy`);
    expect(busy).toMatchObject({ status: 429, headers: { 'retry-after': '7' } });
    expect(busy.body.length).toBe(0);
    const missing = await fetcher.request(`${site.url}/nothing`);
    expect(missing.status).toBe(404);
  });

  it('answers a redirect for the caller to follow, or follows it checking the target', async () => {
    const answered = await fetcher.request(`${site.url}/moved`, { followRedirects: false });
    expect(answered).toMatchObject({ status: 301, headers: { location: '/page' } });
    const followed = await fetcher.request(`${site.url}/moved`);
    expect(followed).toMatchObject({ status: 200, finalUrl: `${site.url}/page` });
    await expect(fetcher.request(`${site.url}/metadata`)).rejects.toMatchObject({
      code: 'FORBIDDEN_URL',
      message: expect.stringMatching(/cloud metadata address/),
    });
  });

  it("caps a body at the request's own limit, else the fetcher's", async () => {
    await expect(fetcher.request(`${site.url}/big`)).rejects.toMatchObject({ code: 'TOO_LARGE' });
    const larger = await fetcher.request(`${site.url}/big`, { maxBytes: 4000 });
    expect(larger.body.length).toBe(2000);
  });

  it('keeps fetch() as it was: a status other than 2xx is an error', async () => {
    await expect(fetcher.fetch(`${site.url}/busy`)).rejects.toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: `127.0.0.1:${site.port} answered HTTP 429`,
    });
    expect((await fetcher.fetch(`${site.url}/moved`)).body.toString()).toBe('hello');
  });
});
