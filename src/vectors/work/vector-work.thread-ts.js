// The vector work pool's thread entry when the code runs from TypeScript sources (jest,
// ts-node): compiles vector-work.thread.ts (its compiled files kept between threads). The
// built server loads the compiled vector-work.thread.js instead.
const requireFromSources = require('../../loader/from-sources');
module.exports = requireFromSources(require.resolve('./vector-work.thread.ts'));
