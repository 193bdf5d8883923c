// The offline half of fusion-lab.mjs: the queries of a dump as contexts a fusion rule ranks,
// and the scoring of rules per set and kind.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ndcgAt } from './metrics.mjs';
import {
  HELD_BACK_FILE,
  MULTILINGUAL_FILE,
  QUERIES_FILE,
  SECOND_HELD_BACK_FILE,
  SECOND_MODE_PREFIX,
  halfOf,
} from './run-retrieval.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LIBRARIES = ['minisearch', 'lunr', 'lunr (body only)', 'orama'];

/** Sets reported, in order; `A` is the one rules are chosen on. */
export const SETS = ['A', 'B', 'held-back', 'second'];
const KINDS = {
  A: ['keyword', 'question', 'folder'],
  second: ['keyword', 'question', 'folder', 'cli'],
};
export const kindsOf = (set) => KINDS[set] ?? KINDS.A;

/**
 * Every query of a dump with what a rule may read (its text, kind, prefix, each side's
 * candidates) and what it is judged by (`relevant`, not for rules), with its set.
 */
export async function contextsOf(dump) {
  const { readsAsKeywords, queryKind } = await import(
    join(root, 'dist/src/vectors/search/query-kind.js')
  );
  const { queryTerms, termCounts } = await import(join(root, 'dist/src/vectors/text/analyzer.js'));
  const statistics = await corpusStatistics(termCounts);
  const read = (file) => JSON.parse(readFileSync(file, 'utf8'));
  const sets = [
    ...read(QUERIES_FILE).map((q) => ({ ...q, set: halfOf(q.id), corpus: 'first' })),
    ...read(HELD_BACK_FILE).map((q) => ({ ...q, set: 'held-back', corpus: 'first' })),
    ...read(MULTILINGUAL_FILE).queries.map((q) => ({
      ...q,
      kind: 'multilingual',
      set: 'multilingual',
      corpus: 'first',
    })),
    ...read(SECOND_HELD_BACK_FILE).queries.map((q) => ({ ...q, set: 'second', corpus: 'second' })),
  ];
  const served = new Map();
  for (const r of dump.perQuery) {
    const second = r.mode.startsWith(SECOND_MODE_PREFIX);
    const mode = second ? r.mode.slice(SECOND_MODE_PREFIX.length) : r.mode;
    served.set(`${second ? 'second' : 'first'}\u0000${mode}\u0000${r.id}`, r.ranked ?? []);
  }
  return sets.flatMap((q) => {
    const sides = dump.sides?.[q.corpus]?.[q.id];
    if (!sides) return [];
    const answers = Object.fromEntries(
      ['hybrid', 'lexical', 'vector', ...LIBRARIES].map((mode) => [
        mode,
        served.get(`${q.corpus}\u0000${mode}\u0000${q.id}`),
      ]),
    );
    return [
      {
        id: q.id,
        set: q.set,
        kind: q.kind,
        query: q.query,
        prefix: q.prefix,
        relevant: q.relevant,
        keywords: readsAsKeywords(q.query),
        queryKind: queryKind?.(q.query),
        terms: [...queryTerms(q.query).terms.keys()],
        // Evidence the local index has (and Qdrant mode only from records): each document's
        // terms, and each term's document frequency in its corpus.
        corpus: statistics[q.corpus],
        embedder: dump.embedder,
        lexical: sides.lexical,
        vector: sides.vector,
        answers,
      },
    ];
  });
}

/** Each corpus's documents' term sets and its terms' document frequencies. */
async function corpusStatistics(termCounts) {
  const { buildCorpus } = await import('./corpus.mjs');
  const { buildSecondCorpus } = await import('./second-corpus.mjs');
  const multilingual = JSON.parse(readFileSync(MULTILINGUAL_FILE, 'utf8')).documents;
  const quiet = { warn: () => undefined };
  return {
    first: statisticsOf([...(await buildCorpus(root, quiet)), ...multilingual], termCounts),
    second: statisticsOf(await buildSecondCorpus(root, quiet), termCounts),
  };
}

/**
 * One corpus's evidence as a rule reads it (`c.corpus`): each document's terms, the terms'
 * document frequencies, and the same over the sample the server learns its statistics from.
 */
export function statisticsOf(documents, termCounts) {
  const sample = Number(process.env.LAB_SAMPLE ?? 5000);
  const md5 = (id) => createHash('md5').update(id).digest('hex');
  const terms = new Map();
  for (const d of documents)
    terms.set(d.document_id, new Set(termCounts(`${d.title}\n${d.body}`).tf.keys()));
  const frequencies = (ids) => {
    const df = new Map();
    for (const id of ids) for (const t of terms.get(id)) df.set(t, (df.get(t) ?? 0) + 1);
    const n = ids.length;
    const idf = (t) => {
      const f = df.get(t) ?? 0;
      return Math.log(1 + (n - f + 0.5) / (f + 0.5));
    };
    return { terms, df, n, idf };
  };
  const ids = documents.map((d) => d.document_id);
  // As the server samples its records: the first `sample` by the md5 of their ids.
  const sampled = [...ids].sort((a, b) => (md5(a) < md5(b) ? -1 : 1)).slice(0, sample);
  return { ...frequencies(ids), sampled: frequencies(sampled) };
}

/**
 * nDCG@10 of `rank` (context → ids, best first) per set and kind: `{ [set]: { [kind]: v,
 * overall: v } }`; the multilingual set as the share of its queries whose grade-3 note is first.
 */
export function scoreRule(contexts, rank) {
  const table = {};
  for (const set of [...SETS, 'multilingual']) {
    const mine = contexts.filter((c) => c.set === set);
    if (mine.length === 0) continue;
    const row = {};
    if (set === 'multilingual') {
      row.first = mine.filter((c) => c.relevant[rank(c)[0]] === 3).length / mine.length;
    } else {
      const each = mine.map((c) => ({
        kind: c.kind,
        v: ndcgAt(10, rank(c).slice(0, 10), c.relevant),
      }));
      for (const kind of kindsOf(set))
        row[kind] = mean(each.filter((e) => e.kind === kind).map((e) => e.v));
      row.overall = mean(each.map((e) => e.v));
    }
    table[set] = row;
  }
  return table;
}

function mean(values) {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The rows a dump's served answers give: each side alone, the server's hybrid, the best library. */
export function servedRules() {
  return {
    'served hybrid': (c) => c.answers.hybrid ?? [],
    'lexical alone': (c) => c.answers.lexical ?? [],
    'vector alone': (c) => c.answers.vector ?? [],
  };
}

/** Per set and kind, the best library's nDCG@10 (the largest of the four, kind by kind). */
export function bestLibrary(contexts) {
  const tables = LIBRARIES.map((name) => scoreRule(contexts, (c) => c.answers[name] ?? []));
  const best = {};
  for (const set of SETS) {
    if (!tables[0][set]) continue;
    best[set] = {};
    for (const kind of [...kindsOf(set), 'overall'])
      best[set][kind] = Math.max(...tables.map((t) => t[set][kind]));
  }
  return best;
}

/**
 * Prints, for each dump, each rule's nDCG@10 per set (kinds, overall) and its worst
 * "hybrid − best side" over the kinds and overall of each set.
 */
export async function evaluate(dumps, names) {
  const { RULES } = await import('./fusion-rules.mjs');
  for (const dump of dumps) {
    const contexts = await contextsOf(dump);
    const served = servedRules();
    const sides = {
      lexical: scoreRule(contexts, served['lexical alone']),
      vector: scoreRule(contexts, served['vector alone']),
    };
    const library = bestLibrary(contexts);
    const { EXPERIMENTS, productRule } = await import('./fusion-rules.mjs');
    const rules = {
      ...served,
      ...(await productRule(dump.embedder, root)),
      ...RULES(dump.embedder),
      ...EXPERIMENTS(dump.embedder),
    };
    const chosen = names
      ? Object.keys(rules).filter((n) => names.some((x) => n.startsWith(x)))
      : Object.keys(rules);
    console.log(`\n== ${dump.embedder}, ${dump.store} (${contexts.length} queries) ==`);
    const header = SETS.filter((s) => sides.lexical[s])
      .map(
        (s) => `${s}: ${[...kindsOf(s), 'overall'].map((k) => k.slice(0, 4)).join(' ')} | Δmin lib`,
      )
      .join(' ‖ ');
    console.log(`${'rule'.padEnd(34)} ${header} ‖ ml`);
    // The best of the libraries on each kind by itself (a rule is to be at least that).
    const libraryCells = SETS.filter((s) => library[s])
      .map((s) => {
        const values = [...kindsOf(s), 'overall'].map((k) => library[s][k].toFixed(3).slice(1));
        return `${values.join(' ')} |           `;
      })
      .join(' ‖ ');
    console.log(`${'best library, each kind'.padEnd(34)} ${libraryCells} ‖`);
    for (const name of chosen) {
      const t = scoreRule(contexts, rules[name]);
      const cells = SETS.filter((s) => t[s])
        .map((s) => {
          const kinds = [...kindsOf(s), 'overall'];
          const values = kinds.map((k) => t[s][k].toFixed(3).slice(1));
          const delta = Math.min(
            ...kinds.map((k) => t[s][k] - Math.max(sides.lexical[s][k], sides.vector[s][k])),
          );
          const overLibrary = t[s].overall / library[s].overall;
          return `${values.join(' ')} | ${delta >= 0 ? '+' : ''}${delta.toFixed(3)} ${overLibrary.toFixed(2)}`;
        })
        .join(' ‖ ');
      console.log(
        `${name.slice(0, 34).padEnd(34)} ${cells} ‖ ${t.multilingual ? t.multilingual.first.toFixed(2) : ''}`,
      );
    }
  }
}

/**
 * How far fusion could go: for each query, the better of its two sides' own rankings; and the
 * best of a family of fusions — the convex combinations of its two lists (min–max or z-scores,
 * a document one side did not find at 0 or, for z-scores, at −3; over each side's first 20 or
 * all 50 candidates; the vector side's share 0 to 1 by 0.05), the server's hybrid and every
 * rule of fusion-rules.mjs — each chosen knowing the query's judgements. A rule of that family
 * reads evidence, not judgements, so it stays under the second ceiling: a target above it
 * needs a better side, or a fusion of another kind.
 */
export async function bounds(dumps) {
  const { combine, minMax, zScores, RULES, EXPERIMENTS, productRule } =
    await import('./fusion-rules.mjs');
  const ids = (list) => list.map((c) => c.documentId);
  const best = (c, candidates) => {
    const score = (ranked) => ndcgAt(10, ranked.slice(0, 10), c.relevant);
    return candidates.reduce((a, b) => (score(b) > score(a) ? b : a));
  };
  for (const dump of dumps) {
    const contexts = await contextsOf(dump);
    const library = bestLibrary(contexts);
    const served = servedRules();
    const sides = {
      lexical: scoreRule(contexts, served['lexical alone']),
      vector: scoreRule(contexts, served['vector alone']),
    };
    const rules = Object.values({
      ...(await productRule(dump.embedder, root)),
      ...RULES(dump.embedder),
      ...EXPERIMENTS(dump.embedder),
    });
    const ceilings = {
      'served hybrid': (c) => c.answers.hybrid ?? [],
      'the better side, each query': (c) => best(c, [ids(c.lexical), ids(c.vector)]),
      'the best fusion, each query': (c) => {
        const candidates = [c.answers.hybrid ?? [], ...rules.map((rule) => rule(c))];
        for (const depth of [20, 50]) {
          for (const [normalise, missing] of [
            [minMax, 0],
            [zScores, 0],
            [zScores, -3],
          ]) {
            const lexical = normalise(c.lexical.slice(0, depth));
            const vector = normalise(c.vector.slice(0, depth));
            for (let step = 0; step <= 20; step++)
              candidates.push(combine(lexical, vector, step / 20, { missing }));
          }
        }
        return best(c, candidates);
      },
    };
    console.log(
      `\n== ${dump.embedder}, ${dump.store}: nDCG@10 per kind and overall (× the best library) ==`,
    );
    const sets = SETS.filter((s) => library[s]);
    const header = sets.map(
      (s) => `${s}: ${[...kindsOf(s), 'overall'].map((k) => k.slice(0, 4)).join(' ')}`,
    );
    console.log(`${''.padEnd(28)} ${header.join(' ‖ ')}`);
    const tables = Object.entries(ceilings).map(([name, rank]) => [
      name,
      scoreRule(contexts, rank),
    ]);
    for (const [name, t] of [
      ...tables,
      ['lexical alone', sides.lexical],
      ['vector alone', sides.vector],
    ]) {
      const cells = sets.map((s) => {
        const values = [...kindsOf(s), 'overall'].map((k) => t[s][k].toFixed(3).slice(1));
        return `${values.join(' ')} (${(t[s].overall / library[s].overall).toFixed(3)})`;
      });
      console.log(`${name.padEnd(28)} ${cells.join(' ‖ ')}`);
    }
  }
}
