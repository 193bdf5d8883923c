import fc from 'fast-check';
import { chunkMarkdown, ChunkerOptions, DEFAULT_CHUNKER_OPTIONS } from './markdown-chunker';
import { countTokens } from '../embedders/tokenizer';

/**
 * Windows the chunker is given: 16 is the smallest it takes, 179/358 are 70 % of 256/512-token
 * models (what the pipeline gives a local model), the default is OpenAI's.
 */
const WINDOWS = [16, 64, 179, 256, 358, 512, DEFAULT_CHUNKER_OPTIONS.maxTokens];

/** The options the pipeline derives from a model's window (vector-batch.processor.ts). */
function optionsFor(maxTokens: number): ChunkerOptions {
  return {
    ...DEFAULT_CHUNKER_OPTIONS,
    targetTokens: Math.min(DEFAULT_CHUNKER_OPTIONS.targetTokens, maxTokens),
    maxTokens,
  };
}

function expectChunksFit(body: string, title: string, options: ChunkerOptions): void {
  const chunks = chunkMarkdown(body, title, options);
  for (const chunk of chunks) {
    expect(countTokens(chunk.text)).toBeLessThanOrEqual(options.maxTokens);
    expect(chunk.content.trim()).not.toBe('');
  }
  expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  // Cuts and overlaps may repeat text, never drop it (code pieces gain fences).
  const kept = chunks.reduce((n, c) => n + c.content.replace(/\s/g, '').length, 0);
  expect(kept).toBeGreaterThanOrEqual(body.replace(/\s/g, '').length);
}

const word = fc.stringMatching(/^[a-z]{1,12}$/);
const slug = fc.stringMatching(/^[a-z0-9-]{1,30}$/);
const url = fc
  .tuple(
    slug,
    fc.array(slug, { minLength: 1, maxLength: 12 }),
    fc.stringMatching(/^[A-Za-z0-9]{0,80}$/),
  )
  .map(([host, path, query]) => `https://${host}.example/${path.join('/')}?token=${query}`);
const badge = fc
  .tuple(word, url, url)
  .map(([name, image, link]) => `[![${name} badge](${image})](${link})`);
const prose = fc.array(word, { minLength: 1, maxLength: 80 }).map((w) => `${w.join(' ')}.`);
const cjk = fc
  .array(fc.integer({ min: 0x4e00, max: 0x9fff }), { minLength: 1, maxLength: 800 })
  .map((codes) => String.fromCodePoint(...codes));
const emoji = fc
  .array(fc.integer({ min: 0x1f300, max: 0x1f5ff }), { minLength: 1, maxLength: 200 })
  .map((codes) => String.fromCodePoint(...codes));
const longWord = fc.stringMatching(/^[A-Za-z0-9+/=_-]{100,1500}$/);

/** One line with no sentence, line or word boundary to cut at, or with very few. */
const unbreakable = fc.oneof(
  fc.array(badge, { minLength: 1, maxLength: 20 }).map((b) => b.join(' ')),
  fc.array(url, { minLength: 1, maxLength: 10 }).map((u) => u.join('')),
  cjk,
  emoji,
  longWord,
);

const block = fc.oneof(
  prose,
  unbreakable,
  fc.tuple(fc.integer({ min: 1, max: 6 }), fc.oneof(prose, unbreakable)).map(([level, text]) => {
    return `${'#'.repeat(level)} ${text}`;
  }),
  // A setext heading made of a long line.
  unbreakable.map((text) => `${text}\n---`),
  fc
    .array(fc.array(fc.oneof(word, url, cjk), { minLength: 2, maxLength: 4 }), {
      minLength: 1,
      maxLength: 8,
    })
    .map((rows) => rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n')),
  fc
    .tuple(fc.constantFrom('```', '~~~~'), fc.array(fc.oneof(prose, unbreakable), { maxLength: 6 }))
    .map(([fence, lines]) => [`${fence}ts`, ...lines, fence].join('\n')),
  // An unclosed fence runs to the end of the document.
  fc
    .array(fc.oneof(prose, unbreakable), { maxLength: 4 })
    .map((lines) => ['```', ...lines].join('\n')),
  fc.array(fc.oneof(prose, badge), { minLength: 1, maxLength: 8 }).map((items) => {
    return items.map((item) => `- ${item}`).join('\n');
  }),
);

const markdown = fc.array(block, { minLength: 1, maxLength: 10 }).chain((blocks) =>
  fc
    .array(fc.constantFrom('\n\n', '\n', '\n\n\n'), {
      minLength: blocks.length,
      maxLength: blocks.length,
    })
    .map((joins) => blocks.map((b, i) => b + joins[i]).join('')),
);
const title = fc.oneof(fc.constant(''), prose, unbreakable);

describe('chunkMarkdown on any markdown', () => {
  it.each(WINDOWS)(
    'never throws and keeps every chunk within a window of %i tokens',
    (maxTokens) => {
      const options = optionsFor(maxTokens);
      fc.assert(
        fc.property(markdown, title, (body, docTitle) => expectChunksFit(body, docTitle, options)),
        // A 16-token window makes hundreds of chunks of each document, each counted again.
        // No shrinking: the failure this guards against, a cut that recursed without end,
        // costs seconds per try, and shrinking it took many minutes (jest cannot stop a
        // synchronous property at its timeout); the first document that fails is shown.
        { numRuns: maxTokens < 64 ? 15 : 40, endOnFailure: true },
      );
    },
  );

  it('refuses a window too small for a character next to its context line', () => {
    expect(() => chunkMarkdown('text', '', optionsFor(15))).toThrow(RangeError);
  });
});

describe('chunkMarkdown on a README whose first heading is a line of badges', () => {
  // The shape of es-toolkit 1.53.2's README: a heading of five badge links (about 250
  // tokens, no space inside a link), a line of language links, then prose and code. With a
  // window of 179 or 256 tokens the heading path left the content no room, and the cut
  // called itself until the stack overflowed.
  const badges = ['license', 'codecov', 'npm', 'jsr', 'discord']
    .map(
      (name, i) =>
        `[![${name} badge](https://img.shields.io/badge/${name}-${'a1b2c3d4'.repeat(i + 1)}-blue.svg?style=shield&token=${'8N5S3AR3C7'.repeat(2)})](https://github.com/example-org/example-toolkit/blob/main/${name.toUpperCase()}/${'x'.repeat(20)})`,
    )
    .join(' ');
  const languages = ['ko_kr', 'zh_hans', 'ja_jp']
    .map(
      (lang) =>
        `[${lang}](https://github.com/example-org/example-toolkit/blob/main/README-${lang}.md)`,
    )
    .join(' | ');
  const body = [
    '![](./docs/public/og.png)',
    `# example-toolkit &middot; ${badges}`,
    `English | ${languages}`,
    'The toolkit is a small utility library with strong types and a compatibility layer.',
    '## Examples',
    "```tsx\nimport { chunk, debounce } from 'example-toolkit';\n\nchunk([1, 2, 3, 4], 2);\n```",
    '## Contributing',
    'Read the contributing guide before opening a pull request.',
  ].join('\n\n');

  it('has a heading path longer than the windows that overflowed', () => {
    expect(countTokens(`example-toolkit › example-toolkit &middot; ${badges}`)).toBeGreaterThan(
      256,
    );
  });

  it.each([16, 64, 179, 256, 358, 512])('chunks it within a window of %i tokens', (maxTokens) => {
    const options = optionsFor(maxTokens);
    expectChunksFit(body, 'example-toolkit', options);
    const chunks = chunkMarkdown(body, 'example-toolkit', options);
    const prose = chunks.find((c) => c.content.includes('small utility library'));
    expect(prose?.headings[0]).toContain('example-toolkit');
    expect(chunks.some((c) => c.content.includes('Read the contributing guide'))).toBe(true);
  });
});
