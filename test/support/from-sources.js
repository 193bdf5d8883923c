// Preload (`node -r`) for processes the tests start from the TypeScript sources: ts-node,
// compiling with SWC rather than TypeScript's own transpiler. Both only strip types here
// (tsc checks them in lint); SWC does it about three times faster (2.8 s of CPU to load the
// application rather than 7.4 s), which every server and `agent-data` process a test starts
// pays once. tsconfig.json's decorator settings (the metadata Nest's injection reads) carry
// over to SWC.
'use strict';
const { join } = require('node:path');

require('ts-node').register({
  transpileOnly: true,
  swc: true,
  project: join(__dirname, '..', '..', 'tsconfig.json'),
});
