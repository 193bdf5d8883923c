import { getEncoding } from 'js-tiktoken';
import { countTokens, splitAtTokens, splitByTokens, tailTokens } from './tokenizer';

describe('tokenizer', () => {
  it('counts cl100k tokens like OpenAI does', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('tiktoken is great!')).toBe(6);
  });

  it('never counts fewer tokens than the encoder gives for the whole text, and only a few more', () => {
    const exact = getEncoding('cl100k_base');
    const text = [
      '# Heading\n\nThe listener reconnects; the worker claims documents (SKIP LOCKED).',
      '```ts\nconst x = await fetch("https://example.com/a/b?c=1");\n```',
      'Ünïcödé, 日本語のテキスト, emoji 🎉 and numbers 1234567.\n\n- a list\n- of items',
    ].join('\n\n');
    const whole = exact.encode(text, [], []).length;
    expect(countTokens(text)).toBeGreaterThanOrEqual(whole);
    expect(countTokens(text)).toBeLessThanOrEqual(whole * 1.1);
  });

  it('treats special tokens in a document as plain text', () => {
    expect(countTokens('before <|endoftext|> after')).toBeGreaterThan(3);
  });

  it('splits text at a token budget without losing any of it', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    const [head, rest] = splitAtTokens(text, 30);
    expect(countTokens(head)).toBeLessThanOrEqual(30);
    expect(head + rest).toBe(text);
    const pieces = splitByTokens(text, 25);
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) expect(countTokens(piece)).toBeLessThanOrEqual(25);
  });

  it('never cuts inside a multi-byte character', () => {
    const text = '日本語のテキスト、絵文字 🎉🎉🎉 も含む。'.repeat(10);
    const pieces = splitByTokens(text, 7);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => !p.includes('\uFFFD'))).toBe(true);
  });

  it('counts very long runs by bytes (an upper bound) instead of merging them slowly', () => {
    const run = 'a'.repeat(100_000);
    expect(countTokens(run)).toBe(100_000);
    expect(countTokens(`word ${run} word`)).toBeGreaterThanOrEqual(100_002);
    const pieces = splitByTokens(run, 1000);
    expect(pieces).toHaveLength(100);
    expect(pieces.join('')).toBe(run);
  });

  it('takes the tail of a text from a word boundary', () => {
    const tail = tailTokens('one two three four five six seven eight nine ten', 4);
    expect(countTokens(tail)).toBeLessThanOrEqual(4);
    expect('one two three four five six seven eight nine ten'.endsWith(tail)).toBe(true);
    expect(tail.startsWith(' ')).toBe(false);
  });
});
