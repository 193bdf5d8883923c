import { extractLinks } from './markdown-links';
import { relativePath, rewritten, targetText, wikilinkPaths } from './link-rewrite';

describe('link rewriting', () => {
  it('writes paths relative to the linking document', () => {
    expect(relativePath('a/b/x.md', 'a/c/y.md')).toBe('../c/y.md');
    expect(relativePath('a/x.md', 'a/y.md')).toBe('y.md');
    expect(relativePath('x.md', 'a/b/y.md')).toBe('a/b/y.md');
    expect(relativePath('a/b/c/x.md', 'y.md')).toBe('../../../y.md');
  });

  it('keeps the style a link was written in', () => {
    const target = (body: string, source: string, to: string) =>
      targetText(extractLinks(body)[0], source, to);
    expect(target('[x](../a/b.md)', 'k/n.md', 'k/z/new.md')).toBe('./z/new.md');
    expect(target('[x](../a/b)', 'k/n.md', 'q/new name.md')).toBe('../q/new%20name');
    expect(target('[x](<../a/b.md>)', 'k/n.md', 'q/new (1).md')).toBe('../q/new (1).md');
    expect(target('[x](/a/b.md)', 'k/n.md', 'q/r.md')).toBe('/q/r.md');
    expect(target('[x](b.md)', 'k/n.md', 'k/q/b.md')).toBe('q/b.md');
    expect(target('kb://a/b.md', 'k/n.md', 'q/r s.md')).toBe('kb://q/r%20s.md');
  });

  it('offers wikilink paths shortest first, as long as the link was written at least', () => {
    expect(wikilinkPaths('a/b/c.md')).toEqual(['c', 'b/c', 'a/b/c']);
    expect(wikilinkPaths('a/b/c.md', 2)).toEqual(['b/c', 'a/b/c']);
    expect(wikilinkPaths('c', 5)).toEqual(['c']);
  });

  it('writes a span shared by several links once', () => {
    const body = '[a][r] [b][r]\n\n[r]: old.md';
    const at = body.indexOf('old.md');
    expect(
      rewritten(body, [
        { start: at, end: at + 6, text: 'new.md' },
        { start: at, end: at + 6, text: 'new.md' },
        { start: 1, end: 2, text: 'A' },
      ]),
    ).toBe('[A][r] [b][r]\n\n[r]: new.md');
  });
});
