import type { CreateDocumentInput } from '../src/documents/documents.service';

let sequence = 0;

/** A valid document input; override what the test is about. */
export function aDocument(overrides: Partial<CreateDocumentInput> = {}): CreateDocumentInput {
  sequence += 1;
  return {
    document_id: `knowledge/test/doc-${sequence}.md`,
    body: `# Document ${sequence}\n\nSome text about topic ${sequence}.`,
    tags: ['test'],
    ...overrides,
  };
}

/**
 * An HTML page as a browser saves it: the site's banner, menu and footer around an article
 * titled `title` whose text says `text`, with a relative link to `notes.txt`.
 */
export function aSavedPage(title = 'Release page', text = 'The <b>marmalade</b> release.'): string {
  return [
    `<!doctype html><html><head><title>Example site | ${title}</title></head><body>`,
    '<header><a href="/">Site banner</a></header>',
    '<nav><ul><li><a href="a.html">Site menu, first</a></li>',
    '<li><a href="b.html">Site menu, second</a></li></ul></nav>',
    `<article><h1>${title}</h1><p>${text} See <a href="notes.txt">the notes</a>.</p>`,
    '<p>The release is cut every quarter; its notes list what changed since the last one.</p>',
    '</article>',
    '<footer>Site footer: all rights reserved</footer>',
    '</body></html>',
  ].join('\n');
}
