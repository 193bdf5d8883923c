import { readsAsKeywords } from './query-kind';

describe('readsAsKeywords', () => {
  it.each([
    'msBeforeNext',
    'LIMIT_UNEXPECTED_FILE',
    'z.discriminatedUnion',
    '--max-old-space-size=4096',
    'npm run build --dry-run',
    'docs/cli.md',
    'pg_restore options',
    'how do I set maxRetries',
    'HTTP status of a refused write',
    'node v20',
    'backup restore',
    'Datenbank',
    '東京の天気',
  ])('%s: keywords', (query) => expect(readsAsKeywords(query)).toBe(true));

  it.each([
    'does a code formatter make a linter unnecessary',
    'how do I bring back a document I deleted by mistake',
    'what happens when the database goes away',
    'Why is my search slow?',
  ])('%s: a sentence', (query) => expect(readsAsKeywords(query)).toBe(false));
});
