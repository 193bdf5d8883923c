import { DomainError } from '../../common/domain-error';
import { pageText } from './page-text';

const page = (contentType: string, body: string | Buffer) => ({
  url: 'https://docs.example.com/a',
  finalUrl: 'https://docs.example.com/a',
  contentType,
  body: typeof body === 'string' ? Buffer.from(body) : body,
});

describe('pageText', () => {
  it('turns HTML into the markdown of its main content, as the web source reads pages', () => {
    const html = `<!doctype html><html><head><title>Setup &amp; Install | Docs</title>
      <style>p { color: red }</style><script>alert('x')</script></head>
      <body><header>Docs site</header><nav>Home | About</nav><aside>Related pages</aside>
      <main><h1>Install</h1><p>Run <a href="/cli">the CLI</a> now.</p>
      <img src="x.png" alt="diagram"><h2>Next  steps</h2><ul><li>one</li><li>two</li></ul></main>
      <footer>Footer © 2026</footer></body></html>`;
    const result = pageText(page('text/html; charset=utf-8', html));
    expect(result.title).toBe('Install');
    expect(result.mediaType).toBe('text/html');
    expect(result.text).toBe(
      [
        '# Install',
        'Run [the CLI](https://docs.example.com/cli) now.',
        '![diagram](https://docs.example.com/x.png)',
        '## Next steps',
        '*   one\n*   two',
      ].join('\n\n'),
    );
  });

  it('takes the <title> when the content has no heading', () => {
    const html =
      '<html><head><title>Setup &amp; Install</title></head><body><p>Run it.</p></body></html>';
    expect(pageText(page('text/html', html))).toEqual({
      text: 'Run it.',
      title: 'Setup & Install',
      mediaType: 'text/html',
    });
  });

  it('keeps text and markdown as they are', () => {
    expect(pageText(page('text/markdown', '# Title\n\nBody\n')).text).toBe('# Title\n\nBody');
    const plain = pageText(page('text/plain', 'just text'));
    expect(plain).toEqual({ text: 'just text', title: undefined, mediaType: 'text/plain' });
  });

  it('decodes the charset of the Content-Type, else of a <meta>, else UTF-8', () => {
    const latin1 = Buffer.from('caf\xe9', 'latin1');
    expect(pageText(page('text/plain; charset=ISO-8859-1', latin1)).text).toBe('café');
    const meta = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>'),
      latin1,
      Buffer.from('</p></body></html>'),
    ]);
    expect(pageText(page('text/html', meta)).text).toBe('café');
    expect(pageText(page('text/plain', 'café')).text).toBe('café');
    expect(pageText(page('text/plain; charset=no-such-charset', 'café')).text).toBe('café');
  });

  it('sniffs HTML when the Content-Type is missing', () => {
    expect(pageText(page('', '<!DOCTYPE html><html><body><h3>T</h3></body></html>')).text).toBe(
      '### T',
    );
    expect(pageText(page('', 'plain words')).mediaType).toBe('text/plain');
  });

  it.each([
    ['application/pdf', '%PDF-1.7', /unsupported content type application\/pdf/],
    ['image/png', 'png', /unsupported content type image\/png/],
    ['application/octet-stream', 'bin', /unsupported content type/],
    ['text/plain', 'a\u0000b', /binary data/],
    ['text/html', '<html><body><script>x</script></body></html>', /no text content/],
    ['text/plain', '  \n ', /no text content/],
  ])('refuses %s body #%# as UPSTREAM_ERROR', (type, body, message) => {
    let error: unknown;
    try {
      pageText(page(type, body));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('UPSTREAM_ERROR');
    expect((error as DomainError).message).toMatch(message);
  });
});
