// The retrieval benchmark's answers for several servers side by side (the embedding models,
// the latent-semantic model) with the search libraries' baselines, and the quality targets of
// an embedding model checked on every set of queries, as PASS and MISS lines.

/** The baselines' modes in a table of run-retrieval.mjs (those of the second corpus prefixed). */
export const BASELINES = ['minisearch', 'lunr', 'lunr (body only)', 'orama'];

/**
 * Each set of queries the targets are checked on: its rows' mode prefix, its kinds, the row
 * of its overall score and of its questions.
 */
export const SETS = [
  { name: 'graded set', prefix: '', kinds: ['keyword', 'question', 'folder'], overall: 'overall' },
  ...['A', 'B'].map((half) => ({
    name: half === 'A' ? 'half A (tuned on)' : 'half B (not tuned on)',
    prefix: '',
    kinds: ['keyword', 'question', 'folder'].map((k) => `${half} ${k}`),
    overall: `${half} overall`,
  })),
  {
    name: 'held-back set',
    prefix: '',
    kinds: ['keyword', 'question', 'folder'].map((k) => `held-back ${k}`),
    overall: 'held-back',
  },
  {
    name: 'second corpus',
    prefix: 'second corpus: ',
    kinds: ['keyword', 'question', 'folder', 'cli'],
    overall: 'overall',
  },
];

/** Hybrid overall at least this times the best library's. */
const OVER_BEST_LIBRARY = 1.1;
/** Hybrid on questions at least this times the lexical side's. */
const QUESTIONS_OVER_LEXICAL = 1.15;

/**
 * The targets, on every set of {@link SETS} the table holds: hybrid nDCG@10 overall ≥ 1.10 ×
 * the best library's, and ≥ the best library's on every kind; on questions ≥ 1.15 × the
 * lexical side's of the same server.
 * @returns {{ set: string, what: string, pass: boolean, line: string }[]}
 */
export function qualityChecks(table, label) {
  const ndcg = (mode, kind) => table.find((r) => r.mode === mode && r.kind === kind)?.ndcg10;
  const checks = [];
  const check = (set, what, value, bound, text) => {
    const pass = value >= bound;
    checks.push({
      set,
      what,
      pass,
      value,
      bound,
      line: `${pass ? 'PASS' : 'MISS'} ${label}, ${set}: ${text}`,
    });
  };
  for (const set of SETS) {
    const hybrid = (kind) => ndcg(`${set.prefix}hybrid`, kind);
    if (hybrid(set.overall) === undefined) continue;
    const best = (kind) =>
      BASELINES.map((name) => ({ name, value: ndcg(`${set.prefix}${name}`, kind) }))
        .filter((b) => b.value !== undefined)
        .reduce((a, b) => (b.value > a.value ? b : a));
    const overall = best(set.overall);
    check(
      set.name,
      'overall',
      hybrid(set.overall),
      OVER_BEST_LIBRARY * overall.value,
      `hybrid overall ${f(hybrid(set.overall))} = ${ratio(hybrid(set.overall), overall.value)} × ${overall.name} ${f(overall.value)} (target ≥ ${OVER_BEST_LIBRARY} ×)`,
    );
    for (const kind of set.kinds) {
      if (hybrid(kind) === undefined) continue;
      const b = best(kind);
      check(
        set.name,
        kind,
        hybrid(kind),
        b.value,
        `hybrid ${kind} ${f(hybrid(kind))} = ${ratio(hybrid(kind), b.value)} × ${b.name} ${f(b.value)} (target ≥ 1 ×)`,
      );
    }
    const questions = set.kinds.find((k) => k.endsWith('question'));
    const lexical = ndcg(`${set.prefix}lexical`, questions);
    if (hybrid(questions) !== undefined && lexical !== undefined) {
      check(
        set.name,
        'questions over lexical',
        hybrid(questions),
        QUESTIONS_OVER_LEXICAL * lexical,
        `hybrid ${questions} ${f(hybrid(questions))} = ${ratio(hybrid(questions), lexical)} × the lexical side's ${f(lexical)} (target ≥ ${QUESTIONS_OVER_LEXICAL} ×)`,
      );
    }
  }
  return checks;
}

/**
 * nDCG@10 of every kind row (first set, its halves, the held-back set, the second corpus) for
 * each server's hybrid, vector and lexical modes, beside the libraries' (from the first table).
 * @param {{ label: string, table: object[] }[]} systems
 */
export function comparisonLines(systems) {
  const columns = [
    ...systems.flatMap(({ label, table }) =>
      ['hybrid', 'vector', 'lexical'].map((mode) => ({ title: `${label} ${mode}`, table, mode })),
    ),
    ...BASELINES.map((mode) => ({ title: mode, table: systems[0].table, mode })),
  ];
  const kinds = (prefix) => [
    ...new Set(
      systems[0].table
        .filter((r) => r.mode === `${prefix}minisearch`)
        .map((r) => r.kind)
        .sort(order),
    ),
  ];
  const rows = [
    ...kinds('').map((kind) => ({ name: kind, prefix: '', kind })),
    ...kinds('second corpus: ').map((kind) => ({
      name: `second corpus: ${kind}`,
      prefix: 'second corpus: ',
      kind,
    })),
  ];
  const width = Math.max(...rows.map((r) => r.name.length));
  const cell = (column, row) => {
    const value = column.table.find(
      (r) => r.mode === `${row.prefix}${column.mode}` && r.kind === row.kind,
    )?.ndcg10;
    return (value === undefined ? '' : value.toFixed(3)).padStart(7);
  };
  const lines = ['nDCG@10; columns:'];
  columns.forEach((c, i) => lines.push(`  ${String(i + 1).padStart(2)} ${c.title}`));
  lines.push(
    `${'kind (queries)'.padEnd(width + 6)}${columns.map((_, i) => String(i + 1).padStart(7)).join('')}`,
  );
  for (const row of rows) {
    const count = systems[0].table.find(
      (r) => r.mode === `${row.prefix}minisearch` && r.kind === row.kind,
    )?.queries;
    lines.push(
      `${`${row.name} (${count})`.padEnd(width + 6)}${columns.map((c) => cell(c, row)).join('')}`,
    );
  }
  return lines;
}

/** The first set's kinds, then its overall, its halves, the held-back set's rows. */
function order(a, b) {
  const rank = (kind) =>
    kind === 'overall'
      ? 1
      : /^[AB] /.test(kind)
        ? 2
        : kind.startsWith('held-back')
          ? 3
          : kind === 'multilingual'
            ? 4
            : 0;
  return rank(a) - rank(b) || a.localeCompare(b);
}

function f(value) {
  return value.toFixed(3);
}

function ratio(value, of) {
  return (value / of).toFixed(2);
}
