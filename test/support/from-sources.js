// Preload (`node -r`) for processes the tests start from the TypeScript sources: ts-node,
// compiling with SWC rather than TypeScript's own transpiler. Both only strip types here
// (tsc checks them in lint); SWC does it about three times faster (2.8 s of CPU to load the
// application rather than 7.4 s), which every server and `agent-data` process a test starts
// pays once. tsconfig.json's decorator settings (the metadata Nest's injection reads) carry
// over to SWC.
//
// Worker threads inherit the preload; there SWC's native module stays unloaded (TypeScript
// compiles): a process whose idle threads were ended with SWC loaded in them died of SIGSEGV.
'use strict';
const { join } = require('node:path');
const { isMainThread } = require('node:worker_threads');

require('ts-node').register({
  transpileOnly: true,
  swc: isMainThread,
  project: join(__dirname, '..', '..', 'tsconfig.json'),
});
