// The model threads' entry when the code runs from TypeScript sources (jest, ts-node):
// compiles model.thread.ts on the fly, with SWC (a development dependency, a quarter of
// TypeScript's time for each thread that starts). The built server loads the compiled
// model.thread.js.
require('ts-node').register({
  transpileOnly: true,
  swc: true,
  compilerOptions: { module: 'commonjs' },
});
module.exports = require('./model.thread.ts');
