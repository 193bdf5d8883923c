// @ts-check
// The import rules `npm run lint` checks (dependency-cruiser): no circle between files or
// between folders, and the roles of src/vectors/ in one direction (docs/architecture.md).
const V = '^src/vectors';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A file must not import itself through other files.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-circular',
      comment: 'A folder must not depend on itself through other folders.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'search-not-sync',
      comment:
        'Ranking a query never reaches into the write pipeline: sync → stores, lexical ← search.',
      severity: 'error',
      from: { path: `${V}/search/` },
      to: { path: `${V}/(sync|work)/` },
    },
    {
      name: 'sync-not-search',
      comment: 'The write pipeline never depends on how queries are ranked.',
      severity: 'error',
      from: { path: `${V}/(sync|work)/` },
      to: { path: `${V}/search/` },
    },
    {
      name: 'stores-below-sync-and-search',
      comment:
        'Stores keep and find passages and vectors; they know nothing of the pipeline or queries.',
      severity: 'error',
      from: { path: `${V}/stores/` },
      to: { path: `${V}/(sync|search|work)/` },
    },
    {
      name: 'lexical-below-sync-and-search',
      comment:
        'The lexical index keeps and ranks terms; it knows nothing of the pipeline, queries or stores.',
      severity: 'error',
      from: { path: `${V}/lexical/` },
      to: { path: `${V}/(sync|search|work|stores|embedders)/` },
    },
    {
      name: 'semantic-below-lexical',
      comment:
        'The latent-semantic model learns from term counts and embeds them; it knows nothing of the lexical index that feeds it, the pipeline, queries or stores.',
      severity: 'error',
      from: { path: `${V}/semantic/` },
      to: { path: `${V}/(sync|search|work|stores|embedders|lexical)/` },
    },
    {
      name: 'embedders-at-the-bottom',
      comment: 'Embedders turn text into vectors and depend on no other role of src/vectors.',
      severity: 'error',
      from: { path: `${V}/embedders/` },
      to: { path: `${V}/(stores|sync|search|work|lexical|semantic)/` },
    },
    {
      name: 'text-at-the-bottom',
      comment: 'Text analysis is pure: it depends on no other part of src/vectors.',
      severity: 'error',
      from: { path: `${V}/text/` },
      to: { path: `${V}/(embedders|stores|sync|search|work|lexical|semantic)/` },
    },
    {
      name: 'roles-not-wiring',
      comment: 'The role folders never import the module wiring above them.',
      severity: 'error',
      from: { path: `${V}/[^/]+/` },
      to: { path: `${V}/[^/]+\\.ts$` },
    },
    {
      name: 'outbound-below-its-users',
      comment:
        'Reaching outside addresses safely serves MCP ingest and the web connector alike: it knows neither.',
      severity: 'error',
      from: { path: '^src/outbound/' },
      to: { path: '^src/(?!outbound/|common/domain-error)' },
    },
    {
      name: 'retry-and-version-at-the-bottom',
      comment:
        'The backoff and the version are read from everywhere and depend on nothing of src/.',
      severity: 'error',
      from: { path: '^src/(retry/|common/version\\.ts$)' },
      to: { path: '^src/(?!retry/)' },
    },
    {
      name: 'src-not-tests',
      comment: 'Product code never imports tests or the bench.',
      severity: 'error',
      from: { path: '^(src|migrations)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
