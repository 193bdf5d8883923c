import { highlight, snippetOf } from './snippet';

describe('snippetOf', () => {
  it('returns short content whole, whitespace collapsed', () => {
    expect(snippetOf('# Title\n\n  Some   text.', 'text')).toBe('Title Some text.');
  });

  it('shows the text of the markdown, not its syntax', () => {
    const content = [
      '## Options',
      '',
      'Run **`agent-data import`** with [the flags](docs/cli.md) below:',
      '',
      '| flag | meaning |',
      '|---|---|',
      '| `--mirror` | delete what has no file |',
      '| `--dry-run` | write nothing |',
      '',
      '- one',
      '- two',
      '',
      '```sh',
      'agent-data import ./notes --prefix notes',
      '```',
      '',
      '> A <em>quoted</em> tip &amp; more.',
    ].join('\n');
    expect(snippetOf(content, 'mirror')).toBe(
      'Options Run agent-data import with the flags below: flag · meaning; --mirror · delete what has no file; --dry-run · write nothing one; two agent-data import ./notes --prefix notes A quoted tip & more.',
    );
  });

  it('shows a wikilink as its label or its target, and leaves one in code as written', () => {
    expect(
      snippetOf(
        'See [[ops/backup]], [[ops/backup#restore|the *restore* steps]] and ![[diagram.png]]; `[[raw]]` stays.',
        'x',
      ),
    ).toBe('See ops/backup, the *restore* steps and diagram.png; [[raw]] stays.');
  });

  it('reads a wikilink in an HTML block, a table cell or an embed with a width as its words', () => {
    expect(
      snippetOf('<details><summary>More</summary>\nSee [[ops/backup.md]]\n</details>', 'x'),
    ).toBe('More See ops/backup.md');
    expect(
      snippetOf('| a | b |\n|---|---|\n| [[ops/x\\|the x.y]] | ![[chart.png|300]] |', 'x'),
    ).toBe('a · b; the x.y · chart.png');
  });

  it('keeps what only looks like markdown inside code and identifiers', () => {
    expect(snippetOf('Set `max_old_space_size` and run `a * b`; snake_case_name stays.', 'x')).toBe(
      'Set max_old_space_size and run a * b; snake_case_name stays.',
    );
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

describe('highlight', () => {
  it('marks words one of whose terms the query has (stems too), whatever their case', () => {
    expect(highlight('Restoring the Cluster from a restore point', ['restor', 'cluster'])).toBe(
      '**Restoring** the **Cluster** from a **restore** point',
    );
  });

  it('marks the parts of identifiers, and one-letter terms only as whole words', () => {
    expect(highlight('ERR_LEASE_LOST_42 in z.discriminatedUnion', ['err', 'leas', 'z'])).toBe(
      '**ERR**_**LEASE**_LOST_42 in **z**.discriminatedUnion',
    );
  });

  it('marks an abbreviation whole, as the analyzer reads it (one word of its letters)', () => {
    expect(highlight('Offices in the U.S.A. open at 9 a.m. daily', ['usa', 'am'])).toBe(
      'Offices in the **U.S.A.** open at 9 **a.m.** daily',
    );
    // Letters of a compound in code are not an abbreviation, nor a sentence's last letter.
    expect(highlight('call x.y.z, see plan B.', ['usa', 'xyz', 'b'])).toBe(
      'call x.y.z, see plan **B**.',
    );
  });

  it('leaves the text alone without lexemes, and marks other scripts', () => {
    expect(highlight('plain text', [])).toBe('plain text');
    expect(highlight('検索 エンジン', ['検索'])).toBe('**検索** エンジン');
    // A run without spaces is one word here; it is marked when one of its bigrams matched.
    expect(highlight('予報: 東京の天気', ['天気'])).toBe('予報: **東京の天気**');
    expect(highlight('restaurant', ['rest'])).toBe('restaurant');
  });
});
