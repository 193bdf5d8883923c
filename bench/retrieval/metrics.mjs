// Ranking metrics with graded relevance (grades 1..3; an id missing from the map is 0).
// All pure functions. `rankedIds` is the system's answer, best first; duplicates after the
// first occurrence count as non-relevant (a system must not earn gain twice for one doc).
//
// - nDCG@k: gain 2^grade - 1, discount 1/log2(rank + 1) (rank from 1); the ideal DCG sorts
//   every judged document by grade and takes the first k. A query with no relevant
//   document scores 0 (and should not exist: queries.json is validated).
// - recall@k: relevant documents (grade >= 1) in the top k / all relevant documents.
// - MRR@k: 1 / rank of the first "answering" document in the top k, 0 if none. A document
//   answers when its grade is >= 2; for a query whose judgements have no grade >= 2, any
//   relevant document (grade >= 1) answers. Rationale: grade 1 means "mentions it", which
//   is not what the first useful hit should be when better documents exist.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

export function ndcgAt(k, rankedIds, relevantMap) {
  const ideal = Object.values(relevantMap)
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  const idcg = dcg(ideal);
  if (idcg === 0) return 0;
  return (
    dcg(
      dedupe(rankedIds)
        .slice(0, k)
        .map((id) => relevantMap[id] ?? 0),
    ) / idcg
  );
}

export function recallAt(k, rankedIds, relevantMap) {
  const relevant = Object.keys(relevantMap).filter((id) => relevantMap[id] >= 1);
  if (relevant.length === 0) return 0;
  const top = new Set(dedupe(rankedIds).slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

export function mrrAt(k, rankedIds, relevantMap) {
  const grades = Object.values(relevantMap);
  const threshold = grades.some((g) => g >= 2) ? 2 : 1;
  const top = dedupe(rankedIds).slice(0, k);
  const rank = top.findIndex((id) => (relevantMap[id] ?? 0) >= threshold);
  return rank === -1 ? 0 : 1 / (rank + 1);
}

/** The metrics this benchmark reports for one ranked answer. */
export function scoreQuery(rankedIds, relevantMap) {
  return {
    ndcg10: ndcgAt(10, rankedIds, relevantMap),
    recall5: recallAt(5, rankedIds, relevantMap),
    mrr10: mrrAt(10, rankedIds, relevantMap),
  };
}

/**
 * Averages per kind and overall.
 * @param {{kind: string, ndcg10: number, recall5: number, mrr10: number}[]} perQueryResults
 * @returns {{kind: string, queries: number, ndcg10: number, recall5: number, mrr10: number}[]}
 *   one row per kind and extra group (sorted by name), then `overall`
 */
export function summarise(perQueryResults) {
  const groups = new Map();
  // A row counts in its kind, and in the extra groups it names (`also`: e.g. `common`, the
  // questions made of common words), but once in `overall`; a `separate` row (the
  // multilingual set) only in its kind.
  for (const r of perQueryResults) {
    for (const group of [r.kind, ...(r.also ?? [])]) {
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(r);
    }
  }
  const row = (kind, rows) => ({
    kind,
    queries: rows.length,
    ndcg10: mean(rows.map((r) => r.ndcg10)),
    recall5: mean(rows.map((r) => r.recall5)),
    mrr10: mean(rows.map((r) => r.mrr10)),
  });
  return [
    ...[...groups.keys()].sort().map((kind) => row(kind, groups.get(kind))),
    row(
      'overall',
      perQueryResults.filter((r) => !r.separate),
    ),
  ];
}

/** Mode of the rows of hybrid's nDCG@10 less the better side's, kind by kind. */
export const BESIDE_SIDES = 'hybrid − best side';

/**
 * Rows `hybrid − best side` (after `prefix`, the second corpus's rows): for each kind, hybrid's
 * nDCG@10 less the larger of the lexical side's and the vector side's alone. Hybrid is the
 * default and should never be worth less than either of its sides (docs/search.md, "Fusion").
 */
export function besideSides(table, prefix = '') {
  const of = (mode, kind) =>
    table.find((r) => r.mode === `${prefix}${mode}` && r.kind === kind)?.ndcg10;
  return table
    .filter((r) => r.mode === `${prefix}hybrid`)
    .flatMap((r) => {
      const sides = [of('lexical', r.kind), of('vector', r.kind)].filter((v) => v !== undefined);
      if (sides.length === 0) return [];
      const best = Math.max(...sides);
      return [
        {
          mode: `${prefix}${BESIDE_SIDES}`,
          kind: r.kind,
          queries: r.queries,
          ndcg10: r.ndcg10 - best,
        },
      ];
    });
}

function dcg(grades) {
  return grades.reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
}

function dedupe(ids) {
  return [...new Set(ids)];
}

function mean(values) {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function selfTest() {
  const close = (actual, expected, what) =>
    assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} != ${expected}`);
  const rel = { a: 3, b: 2, c: 1 };

  // Perfect order: nDCG 1.
  close(ndcgAt(10, ['a', 'b', 'c'], rel), 1, 'ideal ndcg');
  // Order c, b, a: DCG = 1/1 + 3/log2(3) + 7/2 = 6.392789…; IDCG = 7 + 3/log2(3) + 1/2 = 9.392789…
  const dcgCBA = 1 + 3 / Math.log2(3) + 7 / 2;
  const idcg = 7 + 3 / Math.log2(3) + 1 / 2;
  close(ndcgAt(10, ['c', 'b', 'a'], rel), dcgCBA / idcg, 'reversed ndcg');
  // Only b at rank 2 (x is not judged): DCG = 3/log2(3); nDCG = 0.204… of the ideal.
  close(ndcgAt(10, ['x', 'b'], rel), 3 / Math.log2(3) / idcg, 'partial ndcg');
  // Cut-off: with k = 1 only the first result counts; IDCG@1 = 7.
  close(ndcgAt(1, ['b', 'a'], rel), 3 / 7, 'ndcg@1');
  close(ndcgAt(10, [], rel), 0, 'empty ndcg');
  close(ndcgAt(10, ['a', 'a', 'a'], rel), 7 / idcg, 'duplicates count once');

  close(recallAt(5, ['x', 'c', 'y', 'z', 'w', 'a'], rel), 1 / 3, 'recall@5 cut');
  close(recallAt(5, ['a', 'b', 'c'], rel), 1, 'recall@5 all');

  // MRR: first doc with grade >= 2; c (grade 1) does not count while a or b exist.
  close(mrrAt(10, ['c', 'x', 'b'], rel), 1 / 3, 'mrr skips grade 1');
  close(mrrAt(10, ['x', 'a'], rel), 1 / 2, 'mrr rank 2');
  close(mrrAt(2, ['x', 'y', 'a'], rel), 0, 'mrr beyond k');
  // Only grade-1 judgements: any relevant doc answers.
  close(mrrAt(10, ['x', 'y', 'z', 'c'], { c: 1 }), 1 / 4, 'mrr grade-1 only');

  const rows = summarise([
    { kind: 'keyword', ndcg10: 1, recall5: 1, mrr10: 1 },
    { kind: 'keyword', ndcg10: 0, recall5: 0.5, mrr10: 0.5 },
    { kind: 'question', ndcg10: 0.5, recall5: 0, mrr10: 0 },
  ]);
  assert.deepEqual(
    rows.map((r) => [r.kind, r.queries]),
    [
      ['keyword', 2],
      ['question', 1],
      ['overall', 3],
    ],
  );
  close(rows[0].ndcg10, 0.5, 'summary keyword ndcg');
  close(rows[0].recall5, 0.75, 'summary keyword recall');
  close(rows[2].ndcg10, 0.5, 'summary overall ndcg');
  close(rows[2].mrr10, 0.5, 'summary overall mrr');
  return 17;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--self-test')) {
    const checks = selfTest();
    console.log(`metrics self-test: ${checks} checks passed`);
  } else {
    console.log('usage: node bench/retrieval/metrics.mjs --self-test');
  }
}
