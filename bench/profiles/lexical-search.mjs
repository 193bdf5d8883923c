// The in-memory lexical index's search alone, for comparing builds of it side by side (the
// scoring loop's cost, without HTTP, PostgreSQL or the rest of the server):
//   node bench/profiles/lexical-search.mjs [N] DIST [DIST...]
// Each DIST is a build's output folder (`dist` of `npm run build`, or another commit's, built
// with `npx tsc -p tsconfig.build.json --outDir DIR`). N documents (default 30 000) of four
// passages of Zipf-distributed words are indexed, then 400 queries of 2-4 words searched three
// times; each build in its own process, one after the other, so run it on a quiet machine
// and more than once. Prints each build's mean, median and 95th percentile in milliseconds.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [first, ...rest] = process.argv.slice(2);
if (process.env.PROFILE_DIST) {
  measure(process.env.PROFILE_DIST, Number(process.env.PROFILE_DOCUMENTS));
} else {
  const documents = /^\d+$/.test(first ?? '') ? Number(first) : 30_000;
  const builds = /^\d+$/.test(first ?? '') ? rest : [first, ...rest].filter(Boolean);
  if (builds.length === 0) {
    console.error('usage: node bench/profiles/lexical-search.mjs [N] DIST [DIST...]');
    process.exit(2);
  }
  // A build outside this repository (another commit's) finds its packages in this one's.
  const packages = fileURLToPath(new URL('../../node_modules', import.meta.url));
  for (const dist of builds) {
    const env = {
      ...process.env,
      NODE_PATH: packages,
      PROFILE_DIST: resolve(dist),
      PROFILE_DOCUMENTS: String(documents),
    };
    execFileSync(process.execPath, [fileURLToPath(import.meta.url)], { env, stdio: 'inherit' });
  }
}

function measure(dist, documents) {
  const require = createRequire(import.meta.url);
  const { lexicalRecord } = require(`${dist}/src/vectors/lexical/lexical-record.js`);
  const { LexicalIndex } = require(`${dist}/src/vectors/lexical/lexical-index.js`);
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const vocabulary = Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}x`);
  const word = () =>
    vocabulary[Math.min(vocabulary.length - 1, Math.floor(vocabulary.length ** random() - 1))];
  const words = (n) => Array.from({ length: n }, word).join(' ');
  const index = new LexicalIndex();
  for (let d = 0; d < documents; d++) {
    const passages = Array.from({ length: 4 }, () => ({
      headings: [`h ${word()}`],
      content: words(80),
    }));
    const body = passages.map((p) => p.content).join('\n');
    index.set({
      ...lexicalRecord(`title ${words(2)}`, body, passages),
      documentId: `d/${d}.md`,
      revision: 1,
      tags: [],
    });
  }
  const queries = Array.from({ length: 400 }, () =>
    Array.from({ length: 2 + Math.floor(random() * 3) }, () => ({ term: word(), weight: 1 })),
  );
  for (const query of queries.slice(0, 100)) index.search(query, 10);
  const times = [];
  for (let round = 0; round < 3; round++) {
    for (const query of queries) {
      const started = process.hrtime.bigint();
      index.search(query, 10);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const at = (q) => times[Math.floor(times.length * q)].toFixed(3);
  console.log(
    `${dist}: ${documents} documents, search mean ${mean.toFixed(3)} ms, p50 ${at(0.5)}, p95 ${at(0.95)}`,
  );
}
