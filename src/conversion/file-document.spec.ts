import { documentOfFile } from './file-document';

describe('documentOfFile, HTML', () => {
  const page = (head: string, body: string) =>
    Buffer.from(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`, 'latin1');

  it('keeps the main content, titled by its first heading, links as written', async () => {
    const document = await documentOfFile(
      'guide/page.html',
      page(
        '<title>Site | Ferries</title>',
        '<nav><a href="index.html">Home</a></nav><main><h1>Ferries</h1>' +
          '<p>See <a href="../times.html">the times</a> <img src="boat.png" alt="boat"></p></main>' +
          '<footer>Footer</footer>',
      ),
    );
    expect(document).toEqual({
      body: '# Ferries\n\nSee [the times](../times.html) ![boat](boat.png)',
      title: 'Ferries',
      metadata: { source_type: 'html' },
    });
  });

  it('resolves links against an absolute <base>, as the page it was saved from did', async () => {
    const document = await documentOfFile(
      'page.htm',
      page('<base href="https://docs.example.com/guide/">', '<main><a href="a.html">A</a></main>'),
    );
    expect(document.body).toBe('[A](https://docs.example.com/guide/a.html)');
  });

  it('reads the charset its <meta> names, and refuses text that is not UTF-8 otherwise', async () => {
    const latin1 = page('<meta charset="iso-8859-1">', '<main><p>Caf\u00e9</p></main>');
    expect((await documentOfFile('a.html', latin1)).body).toBe('Café');
    const unnamed = page('', '<main><p>Caf\u00e9</p></main>');
    await expect(documentOfFile('b.html', unnamed)).rejects.toThrow('not UTF-8 text');
  });
});
