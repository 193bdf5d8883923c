// Where the Qdrant server binary is, for everything that starts one: the tests
// (test/support/qdrant.ts), the bench (bench/qdrant.mjs) and the image check
// (tools/image-check/services.mjs). CommonJS, so that the TypeScript test support can
// require it as the ES modules import it; its types are in qdrant-binary.d.ts.
const { accessSync, constants, readFileSync, statSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');

const HINT = 'set QDRANT_BIN to a Qdrant 1.18 server binary';

/**
 * `QDRANT_BIN`, else `../shared/qdrant/qdrant` beside the checkout `root` (this file's by
 * default) or, for a linked git worktree, beside its main checkout: worktrees live elsewhere.
 * @param {string} [root]
 */
function qdrantBinary(root = join(__dirname, '..')) {
  const explicit = process.env.QDRANT_BIN;
  const looked = explicit
    ? [resolve(explicit)]
    : checkouts(root).map((checkout) => resolve(checkout, '..', 'shared', 'qdrant', 'qdrant'));
  const path = looked.find(isExecutable);
  return {
    path,
    missing: explicit
      ? `QDRANT_BIN=${explicit} is not an executable file (${HINT})`
      : `no Qdrant server binary at ${looked.join(' or ')} (${HINT})`,
    misconfigured: explicit !== undefined && explicit !== '' && path === undefined,
  };
}

/** The checkout, and the main checkout when this one is a linked worktree (its .git is a file). */
function checkouts(root) {
  try {
    const gitdir = /^gitdir: (.+)$/m.exec(readFileSync(join(root, '.git'), 'utf8'))?.[1];
    if (!gitdir) return [root];
    const common = resolve(root, gitdir.trim());
    const commondir = readFileSync(join(common, 'commondir'), 'utf8').trim();
    return [root, dirname(resolve(common, commondir))];
  } catch {
    return [root]; // a plain clone (.git is a folder), or no git at all
  }
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

module.exports = { qdrantBinary };
