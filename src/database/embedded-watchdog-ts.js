// The embedded cluster's watchdog entry when the code runs from TypeScript sources (jest,
// ts-node): compiles embedded-watchdog.ts (its compiled files kept, as the worker threads'
// are). The built server starts the compiled embedded-watchdog.js instead.
'use strict';
const requireFromSources = require('../loader/from-sources');
requireFromSources(require.resolve('./embedded-watchdog.ts')).main(process.argv.slice(2));
