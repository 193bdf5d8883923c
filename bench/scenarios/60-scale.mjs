// Whether the hot reads stay flat as the table grows: MCP list_documents (prefix,
// limit 50) and get_document at the seeded size, then again after the table has grown to
// BENCH_SCALE_DOCS (300 000) documents, each row compared by p97.5 and requests/s with its
// first measurement. Last of the scenarios: it leaves the big table behind. The added
// documents are inserted by SQL as `skipped` (never embedded), so that the vector pipeline
// does not compete with the measurement; lists and reads do not look at vectors.
// `BENCH_DOCS=3000 BENCH_ONLY=60 npm run bench` measures 3 000 → 300 000.
import { mcpHeaders as mcp, round, seededId, toolCall } from '../lib.mjs';

const CONCURRENCY = 10;
const REQUESTS = 3000;

export default async function scale({ baseUrl, headers, load, documentCount, query, log }) {
  const target = Number(process.env.BENCH_SCALE_DOCS ?? 300_000);
  const mcpHeaders = mcp(headers);
  // The same requests at both sizes: folders and documents of the seeded range.
  const folders = Math.max(1, Math.floor(documentCount / 100));
  const scenarios = [
    [
      'list_documents (prefix, limit 50)',
      (i) =>
        toolCall(
          'list_documents',
          { prefix: `bench/d${String(Math.abs(i) % folders).padStart(3, '0')}/`, limit: 50 },
          i,
        ),
    ],
    [
      'get_document',
      (i) =>
        toolCall(
          'get_document',
          { document_id: seededId((Math.abs(i) * 7919) % documentCount) },
          i,
        ),
    ],
  ];
  const measure = async (body) => {
    const check = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify(body(1)),
    });
    const answer = await check.json();
    if (!check.ok || answer.error || answer.result?.isError) {
      throw new Error(`scale: the check request failed: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    return load({
      concurrency: CONCURRENCY,
      requests: REQUESTS,
      // A longer warm-up than the other scenarios': the first measurement may come right
      // after start-up, and cold code or caches would make the grown table look faster.
      warmup: 2000,
      request: (i) => ({ method: 'POST', path: '/mcp', headers: mcpHeaders, body: body(i) }),
    });
  };

  const [{ n: before }] = await query(`SELECT count(*)::int AS n FROM kb_documents`);
  const first = [];
  for (const [, body] of scenarios) first.push(await measure(body));
  if (before >= target) {
    log(`scale: the table already holds ${before} documents; nothing to compare`);
    return [];
  }
  const started = performance.now();
  for (let from = before; from < target; from += 50_000) {
    await query(
      `INSERT INTO kb_documents (document_id, parent_id, title, tags, body, content_hash, vector_status)
       SELECT format('scale/f%s/doc-%s.md', lpad((i / 100)::text, 4, '0'), lpad(i::text, 6, '0')),
              format('scale/f%s', lpad((i / 100)::text, 4, '0')),
              format('Scale document %s', i), ARRAY['scale'],
              format(E'# Scale document %s\\n\\nOne of the documents that grow the table.', i),
              md5(i::text), 'skipped'
         FROM generate_series($1::int, $2::int) AS i`,
      [from, Math.min(target, from + 50_000) - 1],
    );
  }
  await query('ANALYZE kb_documents');
  const [{ n: after }] = await query(`SELECT count(*)::int AS n FROM kb_documents`);
  log(
    `scale: grew the table from ${before} to ${after} documents in ${Math.round(performance.now() - started)} ms`,
  );

  const rows = [];
  for (const [k, [name, body]] of scenarios.entries()) {
    const base = first[k];
    rows.push({ scenario: `mcp ${name} at ${before} documents`, ...base });
    const grown = await measure(body);
    rows.push({
      scenario: `mcp ${name} at ${after} documents`,
      ...grown,
      compared: `p97.5 ${round(grown.p975 / base.p975)}×, rps ${round(grown.rps / base.rps)}× of ${before} documents`,
    });
  }
  return rows;
}
