/** Unit tests sit beside the code; integration tests under test/ run on a real PostgreSQL. */
const ESM_ONLY =
  '(jose|marked|@modelcontextprotocol/ext-apps|chokidar|readdirp|css-select|css-what|nth-check|boolbase|cssomnom|domhandler|domutils|dom-serializer|domelementtype|entities)';
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  // jose 6, marked 18, ext-apps 1.7, chokidar 5 (with readdirp) and linkedom's selector engine (css-select
  // and the packages it brings) ship ES modules only. Node 20.19+ loads them with require() and so does the built server;
  // jest's module loader cannot yet (Node 24.9+), so they are compiled here.
  [`/node_modules/${ESM_ONLY}/.+\\.js$`]: [
    'ts-jest',
    { tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' }, isolatedModules: true },
  ],
};
const transformIgnorePatterns = [`/node_modules/(?!${ESM_ONLY}/)`];

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/*.spec.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      globalTeardown: '<rootDir>/test/global-teardown.mjs',
    },
  ],
  maxWorkers: 2,
  // Read from the global configuration only: jest-circus ignores a project's testTimeout.
  testTimeout: 30000,
};
