import { DomainError, ErrorCode } from '../common/domain-error';
import { AddressPolicy } from './address-policy';
import { UrlPolicy } from './url-policy';

function refusal(policy: UrlPolicy, url: string): DomainError {
  try {
    policy.check(url);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe('UrlPolicy', () => {
  const policy = new UrlPolicy(
    [
      'docs.example.com',
      '*.wiki.example.org',
      '127.0.0.1',
      '[::1]',
      '::ffff:127.0.0.1',
      '169.254.169.254',
    ],
    false,
    new AddressPolicy(),
  );

  it('accepts https URLs on allowed hosts and subdomains of wildcard entries', () => {
    expect(policy.check('https://docs.example.com/a/b?c=d').hostname).toBe('docs.example.com');
    expect(policy.check('https://DOCS.Example.COM./x').hostname).toBe('docs.example.com.');
    expect(policy.check('https://team.wiki.example.org/page').hostname).toBe(
      'team.wiki.example.org',
    );
    expect(policy.check('https://a.b.wiki.example.org/').hostname).toBe('a.b.wiki.example.org');
  });

  it.each([
    ['https://example.com/', /not on this server's ingest allow-list/],
    ['https://wiki.example.org/', /not on this server's ingest allow-list/],
    ['https://docs.example.com.evil.net/', /not on this server's ingest allow-list/],
    ['https://evildocs.example.com/', /not on this server's ingest allow-list/],
    ['http://docs.example.com/', /use https \(this server does not allow plain http\)/],
    ['ftp://docs.example.com/', /ftp: URLs are not allowed/],
    ['file:///etc/passwd', /file: URLs are not allowed/],
    ['https://user:pw@docs.example.com/', /credentials/],
    ['https://user@docs.example.com/', /credentials/],
  ])('refuses %s', (url, message) => {
    const error = refusal(policy, url);
    expect(error.code).toBe(ErrorCode.FORBIDDEN_URL);
    expect(error.message).toMatch(message);
  });

  describe('judges IP literals by the address they reach, however spelled', () => {
    it.each([
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://0177.0000.0000.0001/',
      'https://127.1/',
      'https://127.0.1/',
      'https://[::1]/',
      'https://[0:0:0:0:0:0:0:1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
    ])('%s is loopback', (url) => {
      const error = refusal(policy, url);
      expect(error.code).toBe(ErrorCode.FORBIDDEN_URL);
      expect(error.message).toMatch(/not a public address/);
    });

    it.each([
      'https://169.254.169.254/',
      'https://2852039166/',
      'https://0251.0376.0251.0376/',
      'https://0xa9fea9fe/',
    ])('%s is the metadata service', (url) => {
      expect(refusal(policy, url).message).toMatch(/cloud metadata/);
    });
  });

  it('allows http only when configured', () => {
    const http = new UrlPolicy(['docs.example.com'], true, new AddressPolicy());
    expect(http.check('http://docs.example.com/').protocol).toBe('http:');
  });

  it('is disabled with an empty allow-list', () => {
    const off = new UrlPolicy([], true, new AddressPolicy());
    expect(off.enabled).toBe(false);
    expect(refusal(off, 'https://docs.example.com/').message).toMatch(
      /INGEST_ALLOWED_HOSTS is empty/,
    );
  });

  it("for a source's own URLs, takes any host and keeps the other rules", () => {
    const any = new UrlPolicy('any', false, new AddressPolicy());
    expect(any.enabled).toBe(true);
    expect(any.check('https://anywhere.example.net/x').hostname).toBe('anywhere.example.net');
    expect(refusal(any, 'http://anywhere.example.net/').message).toMatch(/use https/);
    expect(refusal(any, 'https://user:pw@anywhere.example.net/').message).toMatch(/credentials/);
    expect(refusal(any, 'https://10.0.0.1/').message).toMatch(/not a public address/);
    expect(refusal(any, 'https://169.254.169.254/').message).toMatch(/cloud metadata/);
  });

  it('names a malformed URL as an invalid argument', () => {
    const error = refusal(policy, 'not a url');
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.details).toEqual({ field: 'url' });
  });
});
