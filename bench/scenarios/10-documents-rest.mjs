// Admin REST API at concurrency 10 over the seeded documents (targets in docs/performance.md).
import { seededId } from '../lib.mjs';

const CONCURRENCY = 10;

export default async function documentsRest({ load, headers, documentCount, settle }) {
  const folders = Math.max(1, Math.floor(documentCount / 100));
  const pick = (i) => (i * 7919) % documentCount;
  const idOf = seededId;
  const rows = [];

  const list = await load({
    concurrency: CONCURRENCY,
    requests: 3000,
    request: (i) => ({
      path: `/documents?prefix=${encodeURIComponent(`bench/d${String(i % folders).padStart(3, '0')}/`)}&limit=50`,
      headers,
    }),
  });
  rows.push({ scenario: 'rest list (prefix, limit 50)', ...list, target_p95_ms: 15 });

  const get = await load({
    concurrency: CONCURRENCY,
    requests: 3000,
    request: (i) => ({ path: `/documents/${idOf(pick(i))}`, headers }),
  });
  rows.push({ scenario: 'rest get', ...get, target_p95_ms: 10 });

  const create = await load({
    concurrency: CONCURRENCY,
    requests: 2000,
    request: (i) => ({
      method: 'POST',
      path: '/documents',
      headers,
      body: {
        document_id: `bench-writes/rest/c-${i}.md`,
        body: `# Created ${i}\n\nA new document written by the bench.`,
        tags: ['bench'],
      },
    }),
  });
  rows.push({ scenario: 'rest create', ...create, target_p95_ms: 20 });
  // Each write scenario has the vector pipeline to itself (see 30-mcp.mjs).
  await settle('embedding of the creates');

  const update = await load({
    concurrency: CONCURRENCY,
    requests: 2000,
    request: (i) => ({
      method: 'PUT',
      path: `/documents/${idOf(pick(i + 17))}`,
      headers,
      body: { body: `# Updated ${i}\n\nNew text ${i} for the update scenario.` },
    }),
  });
  rows.push({ scenario: 'rest update', ...update, target_p95_ms: 20 });
  await settle('embedding of the updates');

  const patch = await load({
    concurrency: CONCURRENCY,
    requests: 2000,
    request: (i) => ({
      method: 'PATCH',
      path: `/documents/bench-writes/rest/c-${i}.md`,
      headers,
      body: { old_str: 'A new document', new_str: 'A patched document' },
    }),
  });
  rows.push({ scenario: 'rest patch', ...patch, target_p95_ms: 20 });
  return rows;
}
