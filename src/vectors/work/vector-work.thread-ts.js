// The vector work pool's thread entry when the code runs from TypeScript sources (jest,
// ts-node): compiles vector-work.thread.ts on the fly. The built server loads the compiled
// vector-work.thread.js instead.
require('ts-node').register({ transpileOnly: true, compilerOptions: { module: 'commonjs' } });
module.exports = require('./vector-work.thread.ts');
