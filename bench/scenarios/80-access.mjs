// What an access policy costs (docs/access-control.md): two more servers on the bench
// database, identical but for ACCESS_POLICY, answer the same lists and searches at
// concurrency 10, alternately; each row gives the policy server's requests/s as a share of
// the other's (target ≥ 90 %). Two policies: the key reads a tenth of the seeded folders, then
// half of them. Neither server runs the vector pipeline (the bench server does).
import { load, round, semanticModelLearnt, startServer } from '../lib.mjs';

const KEY = 'access-bench-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const CONCURRENCY = 10;
const REQUESTS = 1500;
const ROUNDS = 2;
const WORDS = `agent vector index query latency postgres search embedding document markdown chunk
  token model cache replica cluster backup restore revision snapshot audit trigger listener worker`
  .split(/\s+/)
  .filter(Boolean);

export default async function access({ databaseUrl, documentCount, log }) {
  const folders = Math.max(1, Math.floor(documentCount / 100));
  const folder = (n) => `bench/d${String(n).padStart(3, '0')}/`;
  const words = (i) => [0, 1, 2].map((k) => WORDS[(i * 7 + k * 11) % WORDS.length]).join(' ');
  const rows = [];
  for (const share of [0.1, 0.5]) {
    const readable = Array.from({ length: Math.max(1, Math.floor(folders * share)) }, (_, n) =>
      folder(n),
    );
    const policy = { rules: [{ who: ['key:access'], read: readable }] };
    const env = {
      API_KEYS: `access:${KEY}:admin,internal`,
      VECTOR_SYNC_ENABLED: 'false',
      RATE_LIMIT_ADMIN_WRITES: 'off',
      RATE_LIMIT_TOOL_CALLS: 'off',
    };
    const [plain, guarded] = [
      await startServer({ databaseUrl, env }),
      await startServer({ databaseUrl, env: { ...env, ACCESS_POLICY: JSON.stringify(policy) } }),
    ];
    try {
      await Promise.all([plain, guarded].map((s) => semanticModelLearnt(s.baseUrl, HEADERS)));
      const inGrants = (i) => folder(i % readable.length);
      const cases = [
        [
          'rest list (prefix in the grants, limit 50)',
          (i) => `/documents?prefix=${encodeURIComponent(inGrants(i))}&limit=50`,
        ],
        [
          'search, hybrid, the whole base',
          (i) => `/search?${new URLSearchParams({ query: words(i), limit: '10' })}`,
        ],
        [
          'search, lexical, the whole base',
          (i) =>
            `/search?${new URLSearchParams({ query: words(i), limit: '10', mode: 'lexical' })}`,
        ],
        [
          'search, hybrid, a folder in the grants',
          (i) =>
            `/search?${new URLSearchParams({ query: words(i), limit: '10', prefix: inGrants(i) })}`,
        ],
      ];
      for (const [name, path] of cases) {
        const measured = { plain: [], guarded: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const [which, server] of [
            ['plain', plain],
            ['guarded', guarded],
          ]) {
            measured[which].push(
              await load({
                baseUrl: server.baseUrl,
                concurrency: CONCURRENCY,
                requests: REQUESTS,
                request: (i) => ({ path: path(i), headers: HEADERS }),
              }),
            );
          }
        }
        // The better of each server's rounds: the machine's noise only ever slows a run down.
        const best = (runs) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
        const [without, withPolicy] = [best(measured.plain), best(measured.guarded)];
        const ratio = withPolicy.rps / without.rps;
        rows.push({
          scenario: `access policy (${Math.round(share * 100)} % of the folders): ${name}`,
          ...withPolicy,
          compared: `rps ${Math.round(ratio * 100)} % of the same server without a policy (${round(without.rps)} req/s, p95 ${round(without.p95)} ms; target ≥ 90 %)`,
        });
        log(`access: ${rows.at(-1).scenario}: ${rows.at(-1).compared}`);
      }
    } finally {
      await Promise.all([plain.stop(), guarded.stop()]);
    }
  }
  return rows;
}
