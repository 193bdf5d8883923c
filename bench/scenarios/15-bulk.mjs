// Bulk writes (docs/documents.md, `POST /documents/bulk`): 10 000 new documents of 2–6 KB
// sent 200 to a request, two requests at a time, as an importer sends a folder. Prints the
// documents written per second (target ≥ 1 500 on 2 cores; embedding follows in the
// background, as for every write) and each request's latency.
import { performance } from 'node:perf_hooks';
import { round } from '../lib.mjs';

const DOCUMENTS = Number(process.env.BENCH_BULK_DOCS ?? 10_000);
const PER_REQUEST = 200;
const CONCURRENCY = 2;
const WORDS = `import export folder markdown document heading section paragraph sentence
  knowledge agent search vector lexical revision audit policy access grant server client`
  .split(/\s+/)
  .filter(Boolean);

export default async function bulk({ load, headers, settle, log }) {
  const run = Date.now().toString(36);
  const body = (i) => {
    const words = 300 + ((i * 7919) % 600); // some 2–6 KB
    const text = Array.from({ length: words }, (_, k) => WORDS[(i + k * 13) % WORDS.length]);
    return `# Imported ${i}\n\n${text.join(' ')}\n`;
  };
  const requests = Math.ceil(DOCUMENTS / PER_REQUEST);
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
              body: body(i),
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
  return [
    {
      scenario: `bulk create (${PER_REQUEST} documents of 2–6 KB a request, ${CONCURRENCY} at a time)`,
      ...result,
      compared: `${perSecond} documents/s (target ≥ 1 500)`,
    },
  ];
}
