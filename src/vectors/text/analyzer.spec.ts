import fc from 'fast-check';
import { analyze, camelPieces, queryTerms, termCounts } from './analyzer';

const terms = (text: string) => {
  const out: string[] = [];
  analyze(text, (term) => out.push(term));
  return out;
};

describe('analyze', () => {
  it('stems English words and keeps stop words marked', () => {
    const seen: Array<[string, boolean]> = [];
    analyze('The workers are configuring databases', (term, stop) => seen.push([term, stop]));
    expect(seen).toEqual([
      ['the', true],
      ['worker', false],
      ['are', true],
      ['configur', false],
      ['databas', false],
    ]);
  });

  it('cuts CJK runs into bigrams, a lone character into a unigram', () => {
    expect(terms('東京の天気')).toEqual(['東京', '京の', 'の天', '天気']);
    expect(terms('每天晚上备份数据库')).toContain('备份');
    expect(terms('每天晚上备份数据库')).toContain('数据');
    expect(terms('数据库')).toEqual(['数据', '据库']);
    expect(terms('字')).toEqual(['字']);
    expect(terms('데이터베이스 백업')).toEqual(['데이', '이터', '터베', '베이', '이스', '백업']);
  });

  it('keeps an identifier whole beside its words and camelCase parts', () => {
    expect(terms('UND_ERR_HEADERS_TIMEOUT')).toEqual([
      'und',
      'err',
      'header',
      'timeout',
      'und_err_headers_timeout',
    ]);
    expect(terms('opts.msBeforeNext')).toEqual([
      'opt',
      'msbeforenext',
      'ms',
      'before',
      'next',
      'opts.msbeforenext',
    ]);
    expect(terms('docs/jwks/createRemoteJWKSet.md')).toContain('docs/jwks/createremotejwkset.md');
  });

  it('reads an abbreviation of single letters as one word, never as one-letter words', () => {
    const seen: Array<[string, boolean, boolean]> = [];
    analyze('Units, e.g. 5 MB (i.e. bytes), in the U.S.A. at 9 a.m.', (term, stop, word) =>
      seen.push([term, stop, word]),
    );
    expect(seen).toEqual([
      ['unit', false, true],
      ['eg', true, true],
      ['5', false, true],
      ['mb', false, true],
      ['ie', true, true],
      ['byte', false, true],
      ['in', true, true],
      ['the', true, true],
      ['usa', false, true],
      ['u.s.a', false, false],
      ['at', true, true],
      ['9', false, true],
      ['am', true, true],
      ['a.m', false, false],
    ]);
    expect([...queryTerms('convert a size, e.g. 5 megabytes').terms.keys()]).toEqual([
      'convert',
      'size',
      '5',
      'megabyt',
      'megabytes',
    ]);
    // Not an abbreviation: a part longer than a letter, or no dot after it (code).
    expect(terms('v1.2.')).toEqual(['v1', '2', 'v1.2']);
    expect(terms('p.x = 3')).toEqual(['p', 'x', 'p.x', '3']);
    // Bounded as every term is.
    const long = `${'a.'.repeat(40)}`;
    expect(terms(long).every((term) => Buffer.byteLength(term) <= 64)).toBe(true);
  });

  it('folds Latin accents and stems Russian and Arabic words', () => {
    expect(terms('Données café')).toEqual(['donne', 'cafe']);
    expect(terms('резервного копирования')).toEqual(terms('резервное копирование'));
    expect(terms('النسخ الاحتياطي')).toEqual(terms('نسخ احتياطية'));
  });

  it('bounds a very long term with a hash of the whole', () => {
    const long = 'x'.repeat(2000);
    const [term] = terms(long);
    expect(Buffer.byteLength(term)).toBeLessThanOrEqual(64);
    expect(terms(long)).toEqual([term]);
    expect(terms(`${long}y`)[0]).not.toBe(term);
  });

  it('stems a word up to 64 characters, and keeps a longer one as written (bounded)', () => {
    const stemmed = `${'quasi'.repeat(12)}ing`; // 63 letters
    expect(terms(stemmed)).toEqual([`${'quasi'.repeat(12)}`]);
    const longer = `${'quasi'.repeat(13)}ing`; // 68: not stemmed, cut with a hash of it
    const [term] = terms(longer);
    expect(term.startsWith(longer.slice(0, 32))).toBe(true);
    expect(term).not.toBe(terms(`${'quasi'.repeat(13)}s`)[0]);
    // A line of 100 000 letters (no language's word) is one bounded term, not minutes of a
    // stemmer whose cost grows with the square of the word.
    const line = 'a'.repeat(100_000);
    expect(terms(line)).toEqual([expect.stringMatching(/^a{32}#[0-9a-f]{16}$/)]);
  });

  it('finds nothing in punctuation, symbols and emoji', () => {
    expect(terms(`&|!():*<>'"\\ -- ;; 🙂🎉`)).toEqual([]);
  });

  it('counts a text length in words that are not stop words', () => {
    expect(termCounts('the cat and the cats').length).toBe(2);
    expect(termCounts('the cat and the cats').tf.get('cat')).toBe(2);
  });
});

describe('queryTerms', () => {
  it('leaves stop words out, unless the query has nothing else', () => {
    expect([...queryTerms('how do I limit the promises').terms.keys()]).toEqual([
      'limit',
      'promis',
      'promises',
    ]);
    expect(queryTerms('the and of')).toEqual({
      terms: new Map([
        ['the', 1],
        ['and', 1],
        ['of', 1],
      ]),
      stopWordsOnly: true,
      written: new Set(),
    });
  });

  it('asks for a word as written too, so a lower-case identifier meets its camelCase form', () => {
    expect(queryTerms('maxretries').terms.has('maxretries')).toBe(true);
    expect(queryTerms('maxRetries').terms.has('maxretries')).toBe(true);
    expect(queryTerms('how many promises').written).toEqual(new Set(['promises']));
  });

  it('has no terms for punctuation only', () => {
    expect(queryTerms('?!? ***').terms.size).toBe(0);
  });
});

describe('command-line options', () => {
  it('are exact terms with their dashes and values, beside their words', () => {
    expect(terms('node --max-old-space-size=4096 app.js')).toEqual([
      'node',
      'max',
      'old',
      'space',
      'size',
      'max-old-space-size',
      '4096',
      'app',
      'js',
      'app.js',
      '--max-old-space-size',
      '--max-old-space-size=4096',
    ]);
    expect(terms('rm -rf dist; git add --all')).toEqual([
      'rm',
      'rf',
      'dist',
      'git',
      'add',
      'all',
      '-rf',
      '--all',
    ]);
    expect(terms('| `-c, --connections` | `--format=json` |')).toEqual(
      expect.arrayContaining(['-c', '--connections', '--format', '--format=json']),
    );
  });

  it('are never found inside words, dashes of markdown or the end of a sentence', () => {
    expect(terms('a well-known x-ray, --- and - items')).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^-/)]),
    );
    expect(terms('pass --force.')).toContain('--force');
    expect(terms('pass --force.')).not.toContain('--force.');
  });

  it('stay in a query where their words are stop words', () => {
    expect([...queryTerms('ls -a --all').terms.keys()]).toEqual(['ls', '-a', '--all']);
  });
});

describe('camelPieces', () => {
  /** The pieces as three replacements cut them, for every part (no shortcut). */
  const byReplacements = (part: string) =>
    part
      .replace(/(\p{Ll})(\p{Lu})/gu, '$1\u0000$2')
      .replace(/(\p{N})(\p{Lu}\p{Ll})/gu, '$1\u0000$2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1\u0000$2')
      .split('\u0000')
      .filter((piece) => piece !== '');

  it('cuts any part as the replacements do, whether or not it takes the shortcut', () => {
    const letters = fc.constantFrom(...'aZé1Éß9_İDž𐐀𐐨xQ'.match(/./gu)!);
    fc.assert(
      fc.property(fc.array(letters, { maxLength: 12 }), (chars) => {
        const part = chars.join('');
        expect(camelPieces(part)).toEqual(byReplacements(part));
      }),
      { numRuns: 2000 },
    );
    expect(camelPieces('maxRetries')).toEqual(['max', 'Retries']);
    expect(camelPieces('Document')).toEqual(['Document']);
  });

  it('gives a token the same terms the second time (from memory) as the first', () => {
    const text = 'The QuickStart guide sets maxRetries in src/app.config.ts, Ünïcödé too.';
    expect(terms(text)).toEqual(terms(text));
    expect(terms(text)).toContain('quickstart');
    expect(terms(text)).toContain('src/app.config.ts');
  });
});
