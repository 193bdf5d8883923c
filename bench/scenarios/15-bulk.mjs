// Bulk writes (docs/documents.md, `POST /documents/bulk`): 10 000 new documents of 2–6 KB
// sent 200 to a request, two requests at a time; then the same number of files imported by
// `agent-data import` (docs/cli.md) from a folder. Prints the documents written per second
// (target ≥ 1 500 on 2 cores; embedding follows in the background, as for every write).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { round } from '../lib.mjs';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'agent-data.js');

const DOCUMENTS = Number(process.env.BENCH_BULK_DOCS ?? 10_000);
const PER_REQUEST = 200;
const CONCURRENCY = 2;
const WORDS = `import export folder markdown document heading section paragraph sentence
  knowledge agent search vector lexical revision audit policy access grant server client`
  .split(/\s+/)
  .filter(Boolean);

/** The `i`th document's markdown: some 2–6 KB. */
export function bulkBody(i) {
  const words = 300 + ((i * 7919) % 600);
  const text = Array.from({ length: words }, (_, k) => WORDS[(i + k * 13) % WORDS.length]);
  return `# Imported ${i}\n\n${text.join(' ')}\n`;
}

/** `count` files of {@link bulkBody} in `dir`: `f<i % 50>/doc-<i>.md`. */
export function writeBulkFiles(dir, count) {
  for (let i = 0; i < count; i++) {
    const file = join(dir, `f${i % 50}`, `doc-${i}.md`);
    if (i < 50) mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bulkBody(i));
  }
}

/**
 * Runs the built `agent-data import dir --prefix prefix` against `baseUrl`: its time in
 * seconds (the command's start included) and its last line, the counts.
 */
export async function timedImport(dir, prefix, baseUrl, apiKey) {
  const started = performance.now();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [BIN, 'import', dir, '--prefix', prefix],
    { env: { ...process.env, AGENT_DATA_URL: baseUrl, AGENT_DATA_API_KEY: apiKey } },
  );
  return { seconds: (performance.now() - started) / 1000, summary: stdout.trim() };
}

export default async function bulk({ load, baseUrl, headers, settle, log }) {
  const run = Date.now().toString(36);
  const requests = Math.ceil(DOCUMENTS / PER_REQUEST);
  let imported;
  const started = performance.now();
  const result = await load({
    concurrency: CONCURRENCY,
    requests,
    warmup: 0,
    request: (r) => ({
      method: 'POST',
      path: '/documents/bulk',
      headers,
      body: {
        items: Array.from(
          { length: Math.min(PER_REQUEST, DOCUMENTS - r * PER_REQUEST) },
          (_, k) => {
            const i = r * PER_REQUEST + k;
            return {
              op: 'create',
              document_id: `bench-bulk/${run}/f${i % 50}/doc-${i}.md`,
              body: bulkBody(i),
            };
          },
        ),
      },
    }),
  });
  const seconds = (performance.now() - started) / 1000;
  const perSecond = round(DOCUMENTS / seconds);
  log(`bulk: ${DOCUMENTS} documents in ${round(seconds)} s: ${perSecond} documents/s`);
  await settle('embedding of the bulk writes');

  // The same through the command line, from files.
  const dir = mkdtempSync(join(tmpdir(), 'agent-data-import-'));
  try {
    writeBulkFiles(dir, DOCUMENTS);
    const { seconds: importSeconds, summary } = await timedImport(
      dir,
      `bench-import/${run}`,
      baseUrl,
      headers['X-API-Key'],
    );
    imported = { seconds: importSeconds, perSecond: round(DOCUMENTS / importSeconds), summary };
    log(
      `bulk: agent-data import of ${DOCUMENTS} files in ${round(importSeconds)} s: ${imported.perSecond} documents/s (${imported.summary})`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await settle('embedding of the imported files');
  return [
    {
      scenario: `agent-data import of ${DOCUMENTS} files of 2–6 KB`,
      p50: round(imported.seconds * 1000),
      rps: imported.perSecond,
      requests: DOCUMENTS,
      compared: `${imported.perSecond} documents/s (target ≥ 1 500), ${imported.summary}`,
    },
    {
      scenario: `bulk create (${PER_REQUEST} documents of 2–6 KB a request, ${CONCURRENCY} at a time)`,
      ...result,
      compared: `${perSecond} documents/s (target ≥ 1 500)`,
    },
  ];
}
