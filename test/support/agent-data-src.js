// The `agent-data` command run from the sources (bin/agent-data.js runs the build), so that
// tests of the command never exercise a stale build.
'use strict';
require('./from-sources');
require('../../src/cli/main').runCli(process.argv.slice(2));
