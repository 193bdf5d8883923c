#!/usr/bin/env node
// The `agent-data` command (src/cli/main.ts), from the build `npm install` makes.
'use strict';
const { main } = require('../dist/src/cli/main.js');

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`agent-data: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
