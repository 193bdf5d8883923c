import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package's name in package.json, which the version is read from. */
const PACKAGE_NAME = 'agent-data';

/**
 * The version in the project's package.json, found by walking up from this file (it sits
 * at a different depth under src/ and dist/src/). What the server, its backups, its
 * announcement and its API description call themselves.
 */
export const SERVER_VERSION: string = findVersion(__dirname);

function findVersion(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === PACKAGE_NAME && manifest.version) return manifest.version;
    } catch {
      // no package.json here: keep walking up
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}
