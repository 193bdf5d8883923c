// The `agent-data` command run from the sources (bin/agent-data.js runs the build), so that
// tests of the command never exercise a stale build.
'use strict';
require('ts-node').register({
  transpileOnly: true,
  project: require('node:path').join(__dirname, '..', '..', 'tsconfig.json'),
});
const { main } = require('../../src/cli/main');

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`agent-data: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
