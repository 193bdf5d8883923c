import fc from 'fast-check';
import { Lexer, type Token, type Tokens } from 'marked';
import { extractLinks, type FoundLink } from './markdown-links';

/** The links as `kind target#fragment (label)`, for short expectations. */
function shown(body: string): string[] {
  return extractLinks(body).map(
    (l) => `${l.kind} ${l.target}${l.fragment === null ? '' : `#${l.fragment}`} (${l.label})`,
  );
}

describe('extractLinks', () => {
  it('finds markdown links, wikilinks and kb:// URIs, in order', () => {
    expect(
      shown(
        'See [the *backup* runbook](../ops/backup.md#restore), [[ops/disk-full]], ' +
          '[[Backup runbook|the runbook]], [[db#Failover]] and kb://services/db.md.',
      ),
    ).toEqual([
      'markdown ../ops/backup.md#restore (the backup runbook)',
      'wikilink ops/disk-full (ops/disk-full)',
      'wikilink Backup runbook (the runbook)',
      'wikilink db#Failover (db)',
      'uri services/db.md (kb://services/db.md)',
    ]);
  });

  it('leaves out code blocks, code spans, HTML comments, escapes and images', () => {
    const body = [
      '# Title with [a link](a.md)',
      '',
      '```sh',
      'cat [not](b.md) [[not]]',
      '```',
      '',
      '~~~',
      '[not](c.md)',
      '~~~~',
      '',
      '    [indented](code.md)',
      '',
      'Text `[code](d.md)` and ``[[code]]`` and \\[not](e.md) and ![image](f.png)',
      '<!-- [hidden](g.md)',
      '[[hidden]] -->',
      'and [kept](h.md)',
    ].join('\n');
    expect(shown(body)).toEqual(['markdown a.md (a link)', 'markdown h.md (kept)']);
  });

  it('reads reference links through their definitions', () => {
    const body =
      'Read [the guide][guide] and [Guide] again.\n\n[guide]: <docs/the guide.md> "Title"\n';
    const links = extractLinks(body);
    expect(links.map((l) => [l.target, l.label])).toEqual([
      ['docs/the guide.md', 'the guide'],
      ['docs/the guide.md', 'Guide'],
    ]);
    // Both point at the definition's destination: a move rewrites it once.
    expect(body.slice(links[0].targetStart, links[0].targetEnd)).toBe('docs/the guide.md');
    expect(links[1].targetStart).toBe(links[0].targetStart);
    expect(links[0].angle).toBe(true);
  });

  it('gives where each target is written, so a move can rewrite it', () => {
    const body = 'A [x](../a/b.md#top "t") B [[c/d#h|label]] C <kb://e/f.md> D kb://g.md.';
    const spans = extractLinks(body).map((l) => body.slice(l.targetStart, l.targetEnd));
    expect(spans).toEqual(['../a/b.md', 'c/d', 'kb://e/f.md', 'kb://g.md']);
    const whole = extractLinks(body).map((l) => body.slice(l.start, l.end));
    expect(whole).toEqual([
      '[x](../a/b.md#top "t")',
      '[[c/d#h|label]]',
      '<kb://e/f.md>',
      'kb://g.md',
    ]);
  });

  it('decodes percent-encoded destinations', () => {
    expect(extractLinks('[x](My%20notes/a%20b.md)')[0].target).toBe('My notes/a b.md');
    expect(extractLinks('[x](bad%zz.md)')[0].target).toBe('bad%zz.md');
  });

  it('takes the inner link when a link text holds one, and an image inside a link', () => {
    expect(shown('[a [b](c.md) d](e.md)')).toEqual(['markdown c.md (b)']);
    expect(shown('[![logo](logo.png)](home.md)')).toEqual(['markdown home.md (logo)']);
  });

  it('keeps external links for the caller to leave out', () => {
    expect(shown('[site](https://example.com/a) and <https://example.com/b>')).toEqual([
      'markdown https://example.com/a (site)',
    ]);
  });

  it('reads links in lists, block quotes and tables', () => {
    const body = '- [one](1.md)\n  - [[two]]\n> [three](3.md)\n\n| a | [four](4.md) |\n|---|---|\n';
    expect(extractLinks(body).map((l) => l.target)).toEqual(['1.md', 'two', '3.md', '4.md']);
  });

  it('treats embeds as wikilinks and an empty wikilink as text', () => {
    expect(shown('![[diagram]] [[ ]] [[#heading]]')).toEqual(['wikilink diagram (diagram)']);
  });

  it('costs nothing on a body without brackets or URIs', () => {
    expect(extractLinks('plain text, no links at all')).toEqual([]);
  });
});

/**
 * The links marked's lexer sees, as the console renders them: its link tokens (not images),
 * and wikilinks and bare kb:// URIs in its text tokens (never in code, code spans or HTML).
 */
function markedLinks(body: string): string[] {
  const found: string[] = [];
  const walk = (tokens: readonly Token[] | undefined) => {
    for (const token of tokens ?? []) {
      switch (token.type) {
        case 'code':
        case 'codespan':
        case 'html':
        case 'image':
          break;
        case 'link': {
          const href = (token as Tokens.Link).href;
          found.push(href.startsWith('kb://') ? `uri ${href.slice(5)}` : `markdown ${href}`);
          break;
        }
        case 'text':
        case 'escape':
          if ('tokens' in token && token.tokens) walk(token.tokens);
          else if (token.type === 'text') found.push(...textLinks(token.raw));
          break;
        case 'list':
          for (const item of (token as Tokens.List).items) walk(item.tokens);
          break;
        case 'table': {
          const table = token as Tokens.Table;
          for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens);
          break;
        }
        default:
          if ('tokens' in token) walk(token.tokens);
      }
    }
  };
  walk(new Lexer({ gfm: true }).lex(body));
  return found;
}

function textLinks(raw: string): string[] {
  const found: string[] = [];
  for (const match of raw.matchAll(
    /\[\[([^[\]\n|#]+)(?:#[^[\]\n|]*)?(?:\|[^[\]\n]*)?\]\]|kb:\/\/[\w/.-]*\w/g,
  )) {
    if (match[1] !== undefined) found.push(`wikilink ${match[1].trim()}`);
    else found.push(`uri ${match[0].slice(5)}`);
  }
  return found;
}

function ours(body: string): string[] {
  return extractLinks(body).map((l: FoundLink) =>
    l.kind === 'markdown'
      ? `markdown ${l.target}${l.fragment === null ? '' : `#${l.fragment}`}`
      : `${l.kind} ${l.target}`,
  );
}

describe('extractLinks agrees with marked', () => {
  const word = fc.constantFrom('alpha', 'beta', 'ops', 'runbook', 'disk', 'db');
  // Reference labels apart from wikilinks' names: with a definition `[x]: …`, `[[x]]` is a
  // wikilink here (as Obsidian reads it) and a reference link in brackets to marked.
  const ref = fc.constantFrom('guide', 'spec');
  const path = fc
    .array(word, { minLength: 1, maxLength: 3 })
    .chain((segments) =>
      fc
        .constantFrom('', '../', './', '/')
        .map((lead) => `${lead}${segments.join('/')}${segments.length % 2 ? '.md' : ''}`),
    );
  const inline = fc.oneof(
    word,
    fc.tuple(word, path).map(([text, p]) => `[${text}](${p})`),
    fc.tuple(word, path, word).map(([text, p, f]) => `[${text}](${p}#${f})`),
    fc.tuple(word, path).map(([text, p]) => `[${text}](<${p}> "title")`),
    fc.tuple(word, ref).map(([text, r]) => `[${text}][${r}]`),
    fc.tuple(ref).map(([r]) => `[${r}]`),
    fc.tuple(path).map(([p]) => `[[${p.replace(/^\.?\.?\//, '')}]]`),
    fc.tuple(word, word).map(([p, l]) => `[[${p}|${l}]]`),
    fc.tuple(word, word).map(([p, h]) => `![[${p}#${h}]]`),
    fc.tuple(word, path).map(([text, p]) => `\`[${text}](${p})\``),
    fc.tuple(word).map(([p]) => `\`[[${p}]]\``),
    fc.tuple(word).map(([p]) => `\`\` [[${p}]] \`\``),
    fc.tuple(word).map(([p]) => `![${p}](${p}.png)`),
    fc.tuple(word, path).map(([p, q]) => `[![${p}](${p}.png)](${q})`),
    fc.tuple(word).map(([p]) => `kb://${p}/x.md`),
    fc.tuple(word).map(([p]) => `<kb://${p}.md>`),
    fc.tuple(word).map(([w]) => `\\[${w}](${w}.md)`),
    fc.tuple(word).map(([w]) => `*${w}*`),
    fc.tuple(word).map(([w]) => `**${w}**`),
    fc.constantFrom('`', '[', ']', '(', ')', '!'),
  );
  const paragraph = fc
    .array(inline, { minLength: 1, maxLength: 8 })
    .map((parts) => parts.join(' '));
  const block = fc.oneof(
    paragraph,
    paragraph.map((p) => `# ${p}`),
    paragraph.map((p) => `- ${p}`),
    fc.tuple(paragraph, paragraph).map(([a, b]) => `- ${a}\n\n  ${b}`),
    fc.tuple(paragraph, paragraph).map(([a, b]) => `1. ${a}\n   - ${b}`),
    paragraph.map((p) => `> ${p}`),
    paragraph.map((p) => '```\n' + p + '\n```'),
    paragraph.map((p) => '~~~~ text\n' + p + '\n~~~~'),
    paragraph.map((p) => '- item\n\n  ```\n  ' + p + '\n  ```'),
    paragraph.map((p) => `    ${p}`),
    paragraph.map((p) => `\t${p}`),
    fc.tuple(paragraph, paragraph).map(([a, b]) => `${a}\n${b}`),
    fc.tuple(ref, path).map(([r, p]) => `[${r}]: ${p}`),
    fc.tuple(word, word).map(([a, b]) => `| ${a} | ${b} |\n|---|---|\n| [${a}](${b}.md) | x |`),
  );
  const document = fc
    .array(block, { minLength: 1, maxLength: 8 })
    .map((blocks) => blocks.join('\n\n'));

  it('on generated documents', () => {
    fc.assert(
      fc.property(document, (body) => {
        expect(ours(body)).toEqual(markedLinks(body));
      }),
      { numRuns: 500, seed: 20261130 },
    );
  });
});
