// The rebuild of a server's lexical index from the records (what a start does when no snapshot
// can be brought up to date: the first start after an upgrade, a snapshot the change log no
// longer reaches): N documents of the search-scale bench, analysed in-process by the build's
// own chunker and records, written to a PostgreSQL of its own (with an anchor field on most,
// as a linked knowledge base has), then the index loaded from them RUNS times, timed.
//
//   npm run build && node [--cpu-prof] bench/profiles/lexical-load.mjs [N=20000] [RUNS=3]
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OwnPostgres } from '../own-postgres.mjs';
import { buildCorpus } from '../retrieval/corpus.mjs';
import { scaleDocument } from '../search-scale/documents.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const dist = (path) => require(join(root, 'dist', 'src', path));
const { DataSource } = require('typeorm');
const { dataSourceOptions } = dist('database/data-source-options');
const { chunkMarkdown, DEFAULT_CHUNKER_OPTIONS } = dist('vectors/work/markdown-chunker');
const { lexicalRecord, encodePostings, joinTerms, encodeAnchorCounts } = dist(
  'vectors/lexical/lexical-record',
);
const { ANALYZER_VERSION } = dist('vectors/text/analyzer');
const { LexicalReplica } = dist('vectors/lexical/lexical.replica');

const size = Number(process.argv[2] ?? 20_000);
const runs = Number(process.argv[3] ?? 3);
const log = (message) => process.stderr.write(`[lexical-load] ${message}\n`);

const cluster = await OwnPostgres.create();
const dataSource = await new DataSource(dataSourceOptions(cluster.url, 4)).initialize();
try {
  await dataSource.runMigrations();
  const corpus = await buildCorpus(root, { warn: () => undefined });
  let started = Date.now();
  const BATCH = 500;
  for (let from = 0; from < size; from += BATCH) {
    const rows = [];
    for (let n = from; n < Math.min(size, from + BATCH); n++) {
      const d = scaleDocument(corpus, n);
      const chunks = chunkMarkdown(d.body, d.title, DEFAULT_CHUNKER_OPTIONS);
      const record = lexicalRecord(d.title, d.body, chunks);
      // Four in five documents are named by links: three words of their own, one of nobody's.
      const anchor =
        n % 5 === 0
          ? { terms: [], counts: [], length: 0 }
          : {
              terms: [...record.terms.slice(0, 3), `linkword${n % 997}`],
              counts: [1, 2, 3, 1],
              length: 7,
            };
      rows.push([d.document_id, d.title, d.body, record, anchor]);
    }
    const column = (f) => rows.map(f);
    await dataSource.query(
      `INSERT INTO kb_documents (document_id, title, body, content_hash)
       SELECT id, title, body, 'h' FROM unnest($1::text[], $2::text[], $3::text[]) AS t(id, title, body)`,
      [column((r) => r[0]), column((r) => r[1]), column((r) => r[2])],
    );
    await dataSource.query(
      `INSERT INTO kb_lexical_documents
              (document_id, revision, analyzer, tags, lengths, passage_lengths, terms, postings,
               anchor_terms, anchor_counts, anchor_length, anchor_stamp)
       SELECT id, 1, $2, '{}', ARRAY[l1, l2, l3], string_to_array(pl, ',')::int[], terms, postings,
              at, ac, al, CASE WHEN al > 0 THEN 1 ELSE 0 END
         FROM unnest($1::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::bytea[],
                     $9::text[], $10::bytea[], $11::int[])
              AS t(id, l1, l2, l3, pl, terms, postings, at, ac, al)`,
      [
        column((r) => r[0]),
        ANALYZER_VERSION,
        column((r) => r[3].lengths[0]),
        column((r) => r[3].lengths[1]),
        column((r) => r[3].lengths[2]),
        column((r) => r[3].passageLengths.join(',')),
        column((r) => joinTerms(r[3].terms)),
        column((r) => encodePostings(r[3])),
        column((r) => joinTerms(r[4].terms)),
        column((r) => encodeAnchorCounts(r[4])),
        column((r) => r[4].length),
      ],
    );
  }
  await dataSource.query('VACUUM ANALYZE');
  log(`${size} records written in ${Date.now() - started} ms`);
  for (let run = 0; run < runs; run++) {
    const replica = new LexicalReplica(dataSource);
    started = Date.now();
    const index = await replica.current();
    log(`run ${run + 1}: ${index.documentCount} documents loaded in ${Date.now() - started} ms`);
    await replica.close();
  }
} finally {
  await dataSource.destroy();
  await cluster.stop();
}
