// The second retrieval corpus: built like the first (corpus.mjs: the same selection of
// markdown files, splitting into sections, titles and licence check, over the versions
// pinned by package-lock.json), from a different fixed list of packages installed in
// node_modules, none of them in corpus.mjs's PACKAGES, with ids under `alt/<package>/...`.
// Its queries (second-held-back.json) were written apart from the first corpus's and are
// never used for tuning: the set measures search on documents nobody tuned on.
//
// What it holds, on purpose: the documentation of command-line tools (options written as
// `--flag=value` and short flags, `verb-noun` subcommands, environment variables), API
// references (identifiers, option keys, error codes) and prose guides, as a team's knowledge
// base of tooling notes would. Left out although installed: packages whose markdown is a
// near copy of a first-corpus package's (uglify-js beside terser, @cspotcode/source-map-support
// beside source-map-support), the search libraries the bench compares with (minisearch,
// lunr, @orama/orama) and packages whose README is mostly sponsor lists (webpack, typeorm)
// or a few lines (typescript, prettier, esbuild, jest).
//
// Licences: corpus.mjs's permissive list plus BlueOak-1.0.0 (a permissive licence, glob's);
// dompurify's `(MPL-2.0 OR Apache-2.0)` is used under Apache-2.0.
//
//   node bench/retrieval/second-corpus.mjs [--stats] [--list]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PACKAGES as FIRST_PACKAGES,
  PERMISSIVE,
  buildCorpus,
  corpusFingerprint,
  printCorpusStats,
} from './corpus.mjs';

export const SECOND_PREFIX = 'alt';

/** Packages whose documentation makes the second corpus (sorted when built). */
export const SECOND_PACKAGES = [
  // Command-line tools (options, subcommands, environment variables).
  'acorn',
  'baseline-browser-mapping',
  'dependency-cruiser',
  'eslint-config-prettier',
  'jsesc',
  'json5',
  'mammoth',
  'marked',
  'mcp-remote',
  'napi-postinstall',
  'playwright-core',
  'regexp-tree',
  'resolve',
  'yaml',
  // Configuration, environment variables, command-line parsing.
  '@pkgjs/parseargs',
  '@scarf/scarf',
  'ci-info',
  'commander',
  'cosmiconfig',
  'global-agent',
  'optionator',
  'source-map-support',
  'tsconfig-paths',
  'yargs-parser',
  // Build tooling APIs.
  'enhanced-resolve',
  'es-module-lexer',
  'fork-ts-checker-webpack-plugin',
  'glob',
  'magic-string',
  'picomatch',
  'tapable',
  'terser-webpack-plugin',
  // Files and formats.
  'comment-json',
  'diff',
  'fflate',
  'file-type',
  'ip-address',
  'jest-diff',
  'jsonc-parser',
  'pdf-lib',
  'strtok3',
  'yauzl',
  // Web and security.
  'cookie',
  'cors',
  'dompurify',
  'keyv',
  'path-to-regexp',
  'router',
  // Terminal interaction, identifiers.
  '@inquirer/prompts',
  '@paralleldrive/cuid2',
  'cli-progress',
  'prompts',
];

/** Files left out of one package (relative paths), beyond corpus.mjs's general rules. */
const SECOND_EXCLUDE = {};

export const SECOND_LICENCES = [...PERMISSIVE, 'BlueOak-1.0.0'];

/**
 * @param {string} rootDir the project root (holds package-lock.json and node_modules/)
 * @param {{ warn?: (message: string) => void }} [options]
 */
export async function buildSecondCorpus(rootDir, { warn } = {}) {
  const overlap = SECOND_PACKAGES.filter((name) => FIRST_PACKAGES.includes(name));
  if (overlap.length > 0)
    throw new Error(`second corpus: ${overlap.join(', ')} also in the first corpus`);
  return buildCorpus(rootDir, {
    ...(warn ? { warn } : {}),
    packages: SECOND_PACKAGES,
    idPrefix: SECOND_PREFIX,
    exclude: SECOND_EXCLUDE,
    licences: SECOND_LICENCES,
  });
}

/**
 * sha256 (hex) of the second corpus: a tag, then every id and body in id order (the first
 * corpus's fingerprint, tagged, so that the two can never be taken for one another).
 */
export function secondCorpusFingerprint(corpus) {
  return corpusFingerprint(corpus, 'second-corpus');
}

// CLI: node bench/retrieval/second-corpus.mjs --stats [--list]
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  printCorpusStats(await buildSecondCorpus(root), process.argv, secondCorpusFingerprint);
}
