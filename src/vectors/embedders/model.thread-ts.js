// The model threads' entry when the code runs from TypeScript sources (jest, ts-node):
// compiles model.thread.ts on the fly. The built server loads the compiled model.thread.js.
require('ts-node').register({ transpileOnly: true, compilerOptions: { module: 'commonjs' } });
module.exports = require('./model.thread.ts');
