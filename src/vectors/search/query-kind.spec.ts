import { queryKind, readsAsKeywords } from './query-kind';

describe('queryKind', () => {
  it.each([
    'msBeforeNext',
    'LIMIT_UNEXPECTED_FILE',
    'z.discriminatedUnion',
    '--max-old-space-size=4096',
    'npm run build --dry-run',
    'docs/cli.md',
    'pg_restore options',
    'node v20',
    'backup restore',
    'Datenbank',
    '東京の天気',
  ])('%s: keywords', (query) => {
    expect(queryKind(query)).toBe('keywords');
    expect(readsAsKeywords(query)).toBe(true);
  });

  it.each([
    'how do I set maxRetries',
    'HTTP status of a refused write',
    'two tenants of the same hosted server each need their own separate sign-in',
    'my .mjs settings file is never found when I load the configuration',
  ])('%s: a sentence naming some code', (query) => {
    expect(queryKind(query)).toBe('codeSentence');
    expect(readsAsKeywords(query)).toBe(false);
  });

  it.each([
    'does a code formatter make a linter unnecessary',
    'how do I bring back a document I deleted by mistake',
    'what happens when the database goes away',
    'Why is my search slow?',
  ])('%s: a sentence', (query) => {
    expect(queryKind(query)).toBe('sentence');
    expect(readsAsKeywords(query)).toBe(false);
  });
});
