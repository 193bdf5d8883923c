// The model threads' entry when the code runs from TypeScript sources (jest, ts-node):
// compiles model.thread.ts (its compiled files kept between threads). The built server loads
// the compiled model.thread.js.
const requireFromSources = require('../../loader/from-sources');
module.exports = requireFromSources(require.resolve('./model.thread.ts'));
