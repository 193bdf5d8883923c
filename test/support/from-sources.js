// Preload (`node -r`) for processes the tests start from the TypeScript sources: ts-node,
// compiling with SWC rather than TypeScript's own transpiler. Both only strip types here
// (tsc checks them in lint); SWC does it about three times faster (2.8 s of CPU to load the
// application rather than 7.4 s), which every server and `agent-data` process a test starts
// pays once. tsconfig.json's decorator settings (the metadata Nest's injection reads) carry
// over to SWC.
//
// Worker threads inherit the preload and leave it: their entries compile their own sources,
// each file once (src/loader/from-sources.js), and SWC's native module loaded in a
// thread made the process die of SIGSEGV when idle threads were ended.
'use strict';
const { join } = require('node:path');
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  require('ts-node').register({
    transpileOnly: true,
    swc: true,
    project: join(__dirname, '..', '..', 'tsconfig.json'),
  });
}
