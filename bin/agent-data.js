#!/usr/bin/env node
// The `agent-data` command (src/cli/main.ts), from the build `npm install` makes.
'use strict';
require('../dist/src/cli/main.js').runCli(process.argv.slice(2));
