// Preloaded (`node -r`) into a command under test: as it exits, it writes the files it
// loaded, one a line, to the file RECORD_MODULES_TO names.
'use strict';
const { writeFileSync } = require('node:fs');

const target = process.env.RECORD_MODULES_TO;
if (target) {
  process.on('exit', () => writeFileSync(target, Object.keys(require.cache).join('\n')));
}
