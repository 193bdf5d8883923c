import { chunkMarkdown, ChunkerOptions, contextLine } from './markdown-chunker';
import { countTokens } from '../embedders/tokenizer';

const small: ChunkerOptions = { targetTokens: 60, overlapTokens: 12, maxTokens: 120 };

function sentences(count: number, word: string): string {
  return Array.from(
    { length: count },
    (_, i) => `Sentence ${i} talks about ${word} in detail.`,
  ).join(' ');
}

describe('chunkMarkdown', () => {
  it('keeps a short document in one chunk with its heading path and title', () => {
    const chunks = chunkMarkdown('# Guide\n\nShort text.', 'My guide');
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({
      index: 0,
      headings: ['Guide'],
      content: '# Guide\n\nShort text.',
    });
    expect(chunks[0].text).toBe('My guide › Guide\n\n# Guide\n\nShort text.');
    expect(Math.abs(chunks[0].tokens - countTokens(chunks[0].text))).toBeLessThanOrEqual(2);
  });

  it('returns no chunk for an empty body', () => {
    expect(chunkMarkdown('', 'title')).toEqual([]);
    expect(chunkMarkdown('\n\n  \n')).toEqual([]);
  });

  it('starts a new chunk at a heading and carries the nested heading path', () => {
    const body = [
      '# Manual',
      sentences(6, 'setup'),
      '## Install',
      sentences(6, 'installing'),
      '### Linux',
      sentences(6, 'linux'),
      '## Usage',
      sentences(3, 'usage'),
    ].join('\n\n');
    const chunks = chunkMarkdown(body, '', small);
    const paths = chunks.map((c) => c.headings.join(' › '));
    expect(paths).toContain('Manual › Install');
    expect(paths).toContain('Manual › Install › Linux');
    const usage = chunks.find((c) => c.content.startsWith('## Usage'))!;
    // A sibling heading replaces the deeper path.
    expect(usage.headings).toEqual(['Manual', 'Usage']);
    expect(usage.text.startsWith('Manual › Usage\n\n')).toBe(true);
  });

  it('understands setext headings', () => {
    const chunks = chunkMarkdown(`Title\n=====\n\n${sentences(2, 'a')}`, '', small);
    expect(chunks[0].headings).toEqual(['Title']);
  });

  it('bounds every chunk by the token limit, counted with the real tokenizer', () => {
    const body = `# Big\n\n${sentences(200, 'limits')}\n\n${'word '.repeat(2000)}`;
    const chunks = chunkMarkdown(body, 'A title', small);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(small.maxTokens);
      expect(Math.abs(chunk.tokens - countTokens(chunk.text))).toBeLessThanOrEqual(3);
    }
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  });

  it('overlaps consecutive chunks of one section', () => {
    const chunks = chunkMarkdown(sentences(40, 'overlap'), '', small);
    expect(chunks.length).toBeGreaterThan(2);
    for (let i = 1; i < chunks.length; i++) {
      const previousTail = chunks[i - 1].content.slice(-25);
      expect(chunks[i].content).toContain(previousTail.trim().split(' ').slice(-2).join(' '));
    }
  });

  it('loses no text: every sentence appears in some chunk', () => {
    const body = sentences(50, 'coverage');
    const chunks = chunkMarkdown(body, '', small);
    for (let i = 0; i < 50; i++) {
      expect(chunks.some((c) => c.content.includes(`Sentence ${i} talks`))).toBe(true);
    }
  });

  it('keeps a fenced code block whole when it fits one input, even past the target size', () => {
    const code = [
      '```ts',
      ...Array.from({ length: 10 }, (_, i) => `const value${i} = compute(${i});`),
      '```',
    ].join('\n');
    expect(countTokens(code)).toBeGreaterThan(small.targetTokens);
    expect(countTokens(code)).toBeLessThan(small.maxTokens - 10);
    const body = `# Code\n\n${sentences(3, 'before')}\n\n${code}\n\n${sentences(3, 'after')}`;
    const chunks = chunkMarkdown(body, '', small);
    const holder = chunks.filter((c) => c.content.includes('const value0'));
    expect(holder).toHaveLength(1);
    expect(holder[0].content).toContain(code);
  });

  it('reads headings as a markdown renderer does: not a lone "-" under a list, not inside a list item', () => {
    const underList = chunkMarkdown(
      '# Options\n\n- **a** first\n- **b** second\n-\n\n- **c** third',
    );
    expect(underList.map((c) => c.headings)).toEqual([['Options']]);
    const inItem = chunkMarkdown(
      '# Runtimes\n\n- Browsers:\n  ### Why not\n\n  Secrets leak.\n\n## Next',
    );
    expect(inItem[0].content).toContain('  ### Why not');
    expect(inItem.every((c) => !c.headings.includes('Why not'))).toBe(true);
  });

  it('keeps fenced code inside a list item whole, as it is indented', () => {
    const code = [
      '    ```js',
      ...Array.from({ length: 10 }, (_, i) => `    const value${i} = compute(${i});`),
      '',
      '    done();',
      '    ```',
    ].join('\n');
    expect(countTokens(code)).toBeGreaterThan(small.targetTokens);
    const body = `# Steps\n\n1. Install:\n\n   - Then run:\n\n${code}\n\n2. ${sentences(3, 'after')}`;
    const chunks = chunkMarkdown(body, '', small);
    const holder = chunks.filter((c) => c.content.includes('const value0'));
    expect(holder).toHaveLength(1);
    expect(holder[0].content).toContain(code);
  });

  it('does not mistake a heading inside a code block for a section', () => {
    const body = '# Real\n\n```md\n# Not a heading\n```\n\nAfter.';
    const chunks = chunkMarkdown(body);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].headings).toEqual(['Real']);
  });

  it('cuts a code block too long for one input at lines, each piece fenced again', () => {
    const code = [
      '```python',
      ...Array.from({ length: 120 }, (_, i) => `    result_${i} = transform(data, ${i})`),
      '```',
    ].join('\n');
    const chunks = chunkMarkdown(code, '', small);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.content.startsWith('```python\n')).toBe(true);
      expect(chunk.content.endsWith('\n```')).toBe(true);
      expect(chunk.tokens).toBeLessThanOrEqual(small.maxTokens);
      // Indentation inside code survives the cut.
      expect(chunk.content).toMatch(/\n {4}result_\d+/);
    }
    for (let i = 0; i < 120; i++) {
      expect(chunks.some((c) => c.content.includes(`result_${i} =`))).toBe(true);
    }
  });

  it('cuts a single enormous word, quickly and within the limit', () => {
    // The tokenizer's merge is quadratic in one run's length: this took seconds unguarded.
    const chunks = chunkMarkdown('x'.repeat(200_000), '', small);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.tokens).toBeLessThanOrEqual(small.maxTokens);
      expect(chunk.content).toMatch(/^[x\s]+$/);
    }
    const kept = chunks.reduce((n, c) => n + c.content.replace(/\s/g, '').length, 0);
    expect(kept).toBeGreaterThanOrEqual(200_000);
  });

  it("joins the pieces of a line cut by tokens as they were (a README's badges)", () => {
    // A model's window: a piece of the line and the overlap before it share a chunk.
    const options: ChunkerOptions = { targetTokens: 350, overlapTokens: 50, maxTokens: 512 };
    const line = Array.from(
      { length: 40 },
      (_, i) =>
        `[![badge${i}](https://img.example.org/badge/build-${i}.svg)](https://github.com/example/project/actions/workflows/ci${i}.yml)`,
    ).join('');
    const chunks = chunkMarkdown(`${line}\n\nThis project builds widgets.`, '', options);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      // A stretch of the line, overlap included (the paragraph after it set apart).
      expect(line).toContain(chunk.content.replace(/\n\nThis project builds widgets\.$/, ''));
    }
    // A long sentence cut by tokens keeps a space between words where it was cut.
    const sentence = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
    const pieces = chunkMarkdown(sentence, '', options);
    expect(pieces.length).toBeGreaterThan(2);
    for (const chunk of pieces) expect(sentence).toContain(chunk.content);
  });

  it('cuts a heading path longer than half the limit to that half, keeping its start and the full headings', () => {
    const heading = `Install ${'https://example.org/a/very/long/path/without/spaces?x=1 '.repeat(20).trim()}`;
    const body = `# ${heading}\n\n${sentences(12, 'installing')}`;
    const chunks = chunkMarkdown(body, 'Setup guide', small);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.headings).toEqual([heading]);
      const [context] = chunk.text.split('\n\n');
      expect(context.startsWith('Setup guide › Install https://example.org/')).toBe(true);
      expect(countTokens(context)).toBeLessThanOrEqual(small.maxTokens / 2);
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(small.maxTokens);
    }
    for (let i = 0; i < 12; i++) {
      expect(chunks.some((c) => c.content.includes(`Sentence ${i} talks`))).toBe(true);
    }
  });

  it('chunks a document holding special tokens like any other text', () => {
    const chunks = chunkMarkdown('# Tokens\n\nThe model ends with <|endoftext|> here.');
    expect(chunks[0].content).toContain('<|endoftext|>');
  });

  it('is deterministic', () => {
    const body = `# A\n\n${sentences(30, 'same')}\n\n## B\n\n${sentences(30, 'again')}`;
    expect(chunkMarkdown(body, 't', small)).toEqual(chunkMarkdown(body, 't', small));
  });
});

describe('contextLine', () => {
  it('prefixes the title unless the path already starts with it', () => {
    expect(contextLine('Doc', ['Intro'])).toBe('Doc › Intro');
    expect(contextLine('Intro', ['Intro', 'Part'])).toBe('Intro › Part');
    expect(contextLine('', [])).toBe('');
  });
});
