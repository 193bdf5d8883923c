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
// Inside jest's sandbox every read of a global (Math, JSON, Object...) goes through the vm
// context's interceptor and costs about a microsecond (nodejs/node#31658): the application's hot
// loops ran 10-100 times slower under test than in production. jest passes the globals named
// here to each module as parameters, which are read at the speed of locals. Only names no
// module redeclares at its top level (a parameter cannot be redeclared with const or let), and
// none that fake timers replace (Date, setTimeout and the like). Not String: a module the web
// connector loads declares one.
const sandboxInjectedGlobals = [
  'Math',
  'JSON',
  'Number',
  'Object',
  'Array',
  'Symbol',
  'Reflect',
  'Map',
  'Set',
  'WeakMap',
  'Error',
  'RegExp',
  'Boolean',
  'Promise',
  'parseInt',
  'parseFloat',
  'isNaN',
  'ArrayBuffer',
  'Uint8Array',
  'Int8Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
];

module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      sandboxInjectedGlobals,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/*.spec.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      sandboxInjectedGlobals,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/global-setup.mjs',
      globalTeardown: '<rootDir>/test/global-teardown.mjs',
    },
  ],
  // Three files at a time on the two cores the suite is measured on: most integration files
  // spend their time waiting on the servers, PostgreSQL clusters and browsers they start, so a
  // third overlaps that waiting (the whole suite in 748 s against 784–852 s with two, on a fresh
  // clone, every test passing in both).
  maxWorkers: 3,
  // Read from the global configuration only: jest-circus ignores a project's testTimeout.
  testTimeout: 30000,
};
