import { snippetOf } from './snippet';

describe('snippetOf', () => {
  it('returns short content whole, whitespace collapsed', () => {
    expect(snippetOf('# Title\n\n  Some   text.', 'text')).toBe('# Title Some text.');
  });

  it('starts shortly before the first query word and marks the cuts', () => {
    const content = `${'intro words '.repeat(60)}the listener reconnects with backoff ${'tail words '.repeat(60)}`;
    const snippet = snippetOf(content, 'Listener backoff', 120);
    expect(snippet.length).toBeLessThanOrEqual(120);
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet).toContain('listener reconnects with backoff');
  });

  it('starts at the beginning when no query word occurs', () => {
    const content = 'alpha '.repeat(100);
    const snippet = snippetOf(content, 'zzz', 50);
    expect(snippet.startsWith('alpha')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet.length).toBeLessThanOrEqual(50);
  });

  it('never exceeds the limit when the match is near the end', () => {
    const content = `${'x '.repeat(400)}needle at the end`;
    const snippet = snippetOf(content, 'needle', 80);
    expect(snippet.length).toBeLessThanOrEqual(80);
    expect(snippet).toContain('needle at the end');
    expect(snippet.startsWith('…')).toBe(true);
  });
});
