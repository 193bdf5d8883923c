// Candidate fusion rules for fusion-lab.mjs. Each rule ranks one query's documents from what
// the server's search service has when it fuses: each side's candidates with their scores
// (best first), the query's text, analysed terms and kind (`keywords`), its prefix.
//
// A side's list is `[{ documentId, score }]`; a rule answers document ids, best first.

const DEPTH = 20;

/** Min–max scaling over a list (the product's fusion today). */
export function minMax(list) {
  if (list.length === 0) return new Map();
  const max = list[0].score;
  const min = list[list.length - 1].score;
  const range = max - min;
  return new Map(list.map((c) => [c.documentId, range > 0 ? (c.score - min) / range : 1]));
}

/** Scores over the best (no minimum subtracted). */
export function overMax(list) {
  const max = Math.max(1e-12, list[0]?.score ?? 0);
  return new Map(list.map((c) => [c.documentId, c.score / max]));
}

/** z-scores over the list. */
export function zScores(list) {
  const { mean, sd } = stats(list.map((c) => c.score));
  return new Map(list.map((c) => [c.documentId, sd > 0 ? (c.score - mean) / sd : 0]));
}

export function stats(values) {
  const n = values.length;
  if (n === 0) return { mean: 0, sd: 0 };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
  return { mean, sd };
}

/**
 * Convex combination of two normalised maps, `w` the vector side's share; a document a side
 * did not find gets `missing` from it (0 by default). Ties keep the lexical order first.
 */
export function combine(lex, vec, w, { missing = 0, floor, lexicalFloor } = {}) {
  const ids = [...new Set([...lex.keys(), ...vec.keys()])];
  const scored = ids.map((id) => ({
    id,
    sides: (lex.has(id) ? 1 : 0) | (vec.has(id) ? 2 : 0),
    score: (1 - w) * (lex.get(id) ?? missing) + w * (vec.get(id) ?? missing),
  }));
  scored.sort((a, b) => b.score - a.score);
  const best = scored[0]?.score ?? 0;
  return scored
    .filter(
      (s) =>
        s.sides === 3 ||
        (s.sides === 2 && !(floor !== undefined && s.score < floor * best)) ||
        (s.sides === 1 && !(lexicalFloor !== undefined && s.score < lexicalFloor * best)),
    )
    .map((s) => s.id);
}

/** Reciprocal rank fusion (Cormack et al. 2009), `wv` the vector side's weight. */
export function rrf(lexical, vector, { k = 60, wv = 1, wl = 1 } = {}) {
  const scores = new Map();
  const add = (list, w) =>
    list.forEach((c, rank) =>
      scores.set(c.documentId, (scores.get(c.documentId) ?? 0) + w / (k + rank + 1)),
    );
  add(lexical, wl);
  add(vector, wv);
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

/** Query-performance predictors over a side's scores (the first `k`). */
export function predictors(list, k = DEPTH) {
  const s = list.slice(0, k).map((c) => c.score);
  if (s.length === 0) return { n: 0, peak: 0, gap: 0, cv: 0, drop: 0, top: 0 };
  const { mean, sd } = stats(s);
  const last = s[s.length - 1];
  return {
    n: s.length,
    top: s[0],
    // How far the first stands above the rest, in standard deviations.
    peak: sd > 0 ? (s[0] - mean) / sd : 0,
    // The first's lead over the second, as a share of the whole list's range.
    gap: s[0] - last > 0 ? (s[0] - (s[1] ?? last)) / (s[0] - last) : 0,
    // Normalised query commitment (Shtok et al.): the spread over the mean.
    cv: mean > 0 ? sd / mean : 0,
    // How far the scores fall from the first to the last.
    drop: s[0] > 0 ? 1 - last / s[0] : 0,
  };
}

/** Overlap of the two sides' first `k` documents, 0..1. */
export function overlap(lexical, vector, k = 10) {
  const a = new Set(lexical.slice(0, k).map((c) => c.documentId));
  const b = vector.slice(0, k).map((c) => c.documentId);
  const n = Math.min(k, a.size, b.length);
  return n === 0 ? 0 : b.filter((id) => a.has(id)).length / n;
}

const CURRENT = {
  lsa: { keywords: 0.3, sentences: 0.3 },
  bge: { keywords: 0.2, sentences: 0.6 },
  e5: { keywords: 0.2, sentences: 0.6 },
};

/** The rules measured, for a dump of `embedder`. */
export function RULES(embedder) {
  const top = (list) => list.slice(0, DEPTH);
  const current = CURRENT[embedder];
  const rules = {
    'current (min-max, kind, floors)': (c) =>
      combine(
        minMax(top(c.lexical)),
        minMax(top(c.vector)),
        c.keywords ? current.keywords : current.sentences,
        {
          floor: 0.25,
          lexicalFloor: 0.1,
        },
      ),
  };
  for (const w of [0.3, 0.5, 0.7])
    rules[`min-max ${w}`] = (c) => combine(minMax(top(c.lexical)), minMax(top(c.vector)), w);
  for (const w of [0.3, 0.5, 0.7])
    rules[`z-score ${w}`] = (c) =>
      combine(zScores(top(c.lexical)), zScores(top(c.vector)), w, { missing: -3 });
  rules['rrf k60'] = (c) => rrf(top(c.lexical), top(c.vector));
  return rules;
}

/**
 * Min–max where a list that ended before the depth asked has its floor at 0: the documents it
 * did not return scored nothing on that side (a lexical side matching three documents in a
 * folder does not make its third a non-match).
 */
export function minMaxOpen(list, depth = DEPTH) {
  if (list.length === 0) return new Map();
  const max = list[0].score;
  const min =
    list.length < depth ? Math.min(0, list[list.length - 1].score) : list[list.length - 1].score;
  const range = max - min;
  return new Map(list.map((c) => [c.documentId, range > 0 ? (c.score - min) / range : 1]));
}

const logit = (p) => Math.log(p / (1 - p));
const sigmoid = (x) => 1 / (1 + Math.exp(-x));

/**
 * The server's own rule, run from its build (dist/, or FUSION_MODULE: a compiled fusion.js):
 * its fuse and vectorWeightFor, with the weights it gives this embedder (dist/'s variables.js,
 * or FUSION_PRIORS' first `keywords/sentences`), over SEARCH_CANDIDATES (20) a side.
 */
export async function productRule(embedder, root) {
  const { join } = await import('node:path');
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  let fusion;
  let variables;
  try {
    fusion = require(process.env.FUSION_MODULE ?? join(root, 'dist/src/vectors/search/fusion.js'));
    variables = require(join(root, 'dist/src/config/variables.js'));
  } catch {
    return {};
  }
  const given = process.env.FUSION_PRIORS?.split(',')[0]?.split('/').map(Number);
  const weights = given
    ? { keywords: given[0], sentences: given[1], codeSentences: given[2] ?? given[0] }
    : embedder === 'lsa'
      ? variables.LOCAL_VECTOR_WEIGHTS
      : embedder === 'bge'
        ? variables.MODEL_VECTOR_WEIGHTS
        : variables.OPENAI_VECTOR_WEIGHTS;
  if (!fusion.vectorWeightFor) return {};
  const name = `product ${weights.keywords}/${weights.sentences}/${weights.codeSentences}`;
  // The product's rule with the lexical coverage's move added here, with each corpus's exact
  // document frequencies and with those of a sample of it (LAB_SAMPLE documents by the md5 of
  // their ids, as the server samples its records), for a build that does not move by it itself.
  const withCoverage = (label, statistics) => (c) => {
    const lexical = c.lexical.slice(0, DEPTH);
    const vector = c.vector.slice(0, DEPTH);
    const prior =
      weights[PRIOR_OF[c.queryKind]] ??
      (c.queryKind === 'sentence' ? weights.sentences : weights.keywords);
    const w0 = fusion.vectorWeightFor(prior, lexical, vector, DEPTH);
    const cov = coverage({ ...c, corpus: statistics(c) });
    const w = w0 > 0 && w0 < 1 ? sigmoid(logit(w0) + (0.5 - cov)) : w0;
    return fusion
      .fuse(lexical, vector, w, {
        floor: 0.25,
        lexicalFloor: 0.1,
        depth: DEPTH,
        vectorFromZero: embedder === 'lsa',
      })
      .map((h) => h.documentId);
  };
  let table;
  let termTable;
  try {
    table = require(join(root, 'dist/src/vectors/search/term-table.js'));
    const { termId } = require(join(root, 'dist/src/vectors/stores/qdrant/term-ids.js'));
    // A lab corpus's sampled statistics as the server's term table (terms by their ids).
    const tables = new WeakMap();
    termTable = (statistics) => {
      if (!tables.has(statistics)) {
        const byId = new Map();
        for (const [term, f] of statistics.df)
          byId.set(termId(term), (byId.get(termId(term)) ?? 0) + f);
        const ids = Uint32Array.from(byId.keys()).sort();
        tables.set(statistics, {
          documents: statistics.n,
          ids,
          df: Uint32Array.from(ids, (id) => byId.get(id)),
        });
      }
      return tables.get(statistics);
    };
  } catch {
    table = undefined;
  }
  if (fusion.COVERAGE_STRENGTH && !table?.lexicalCoverage)
    throw new Error(`${root}/dist moves by the coverage but has no term table: build it again`);
  const coverageRules = fusion.COVERAGE_STRENGTH
    ? {}
    : {
        [`${name} +coverage exact`]: withCoverage('exact', (c) => c.corpus),
        [`${name} +coverage sample`]: withCoverage('sample', (c) => c.corpus.sampled),
      };
  // The product's rule with one of its parts changed, for the embedder whose dump this is:
  // the coverage's strength `cov×a` or the commitments' `evidence×e` (the other part as the
  // build has it), or z-scores in place of min–max under the product's weight
  // (FUSION_VARIANTS=1; FUSION_GRID=1 adds both strengths over a grid, `g eE cC`; measured on
  // half A, docs/search.md "Fusion", the fourth round). A build that moves by the lexical
  // coverage reads it from the corpus's sampled table; a build from before sentences naming
  // code had weights of their own read them as keywords.
  const coverageOf = (c) =>
    table?.lexicalCoverage
      ? table.lexicalCoverage(termTable(c.corpus.sampled), {
          terms: c.terms,
          held: c.corpus.terms.get(c.lexical[0]?.documentId) ?? new Set(),
        })
      : undefined;
  const priorOf = (c) =>
    weights[PRIOR_OF[c.queryKind]] ??
    (c.queryKind === 'sentence' || (!c.queryKind && !c.keywords)
      ? weights.sentences
      : weights.keywords);
  const fuseAt = (c, w) =>
    fusion
      .fuse(c.lexical.slice(0, DEPTH), c.vector.slice(0, DEPTH), w, {
        floor: 0.25,
        lexicalFloor: 0.1,
        depth: DEPTH,
        // As the server: a cosine of 0 means no match for the latent-semantic model only.
        vectorFromZero: embedder === 'lsa',
      })
      .map((h) => h.documentId);
  // The product's weight with its two strengths `e` (commitments, over the first `n` of each
  // side) and `a` (coverage) given.
  // How many candidates the commitments read: a build from before folder queries read fewer
  // reads the fusion's depth.
  const depthOf = (c) => fusion.commitmentDepth?.(DEPTH, c.prefix || undefined) ?? DEPTH;
  // The product's weight for a query, with its own coverage or the one given.
  const productWeight = (c, cov = coverageOf(c)) =>
    fusion.vectorWeightFor(
      priorOf(c),
      c.lexical.slice(0, DEPTH),
      c.vector.slice(0, DEPTH),
      depthOf(c),
      cov,
    );
  const weightAt = (c, e, a, n = depthOf(c)) => {
    const lead =
      fusion.commitment(c.vector.slice(0, DEPTH), n) -
      fusion.commitment(c.lexical.slice(0, DEPTH), n);
    return sigmoid(logit(priorOf(c)) + e * lead + a * (0.5 - coverageOf(c)));
  };
  const variants = {};
  if (process.env.FUSION_VARIANTS && table?.lexicalCoverage) {
    for (const a of [0.5, 1.5, 2, 3]) {
      variants[`${name} cov×${a}`] = (c) => {
        const w0 = fusion.vectorWeightFor(
          priorOf(c),
          c.lexical.slice(0, DEPTH),
          c.vector.slice(0, DEPTH),
          depthOf(c),
        );
        const w = w0 > 0 && w0 < 1 ? sigmoid(logit(w0) + a * (0.5 - coverageOf(c))) : w0;
        return fuseAt(c, w);
      };
    }
    for (const e of [0, 0.5, 1.5, 2, 3])
      variants[`${name} evidence×${e}`] = (c) =>
        fuseAt(c, weightAt(c, e, fusion.COVERAGE_STRENGTH));
    // Both sides' commitment over as many candidates (a side that ran out in a folder has
    // fewer, its last ones weak matches, which reads as commitment).
    for (const e of [1, 1.5, 2])
      variants[`${name} ev${e} same`] = (c) =>
        fuseAt(
          c,
          weightAt(
            c,
            e,
            fusion.COVERAGE_STRENGTH,
            Math.max(1, Math.min(c.lexical.length, c.vector.length, DEPTH)),
          ),
        );
    if (process.env.FUSION_GRID)
      for (const e of [1, 1.5, 2, 2.5, 3])
        for (const a of [0.5, 1, 1.5, 2])
          variants[`g e${e} c${a}`] = (c) => fuseAt(c, weightAt(c, e, a));
    // A folder query's coverage with its terms weighed inside the folder rather than the
    // corpus (docs/search.md, "Fusion": a word every document of the folder holds tells its
    // documents apart no better than a common word): by their idf among the folder's
    // documents (`fidf`), by both idfs (`both`), or by the corpus's with the terms held by
    // 80 % of the folder's documents left out (`drop80`). Measured and not taken.
    const folderCoverage = (c, how) => {
      const held = c.corpus.terms.get(c.lexical[0]?.documentId) ?? new Set();
      const inFolder = [...c.corpus.terms.keys()].filter((id) => id.startsWith(c.prefix));
      const nf = inFolder.length;
      let all = 0;
      let found = 0;
      for (const t of c.terms) {
        const dff = inFolder.filter((id) => c.corpus.terms.get(id).has(t)).length;
        const fidf = Math.log(1 + (nf - dff + 0.5) / (dff + 0.5));
        const cidf = c.corpus.idf(t);
        const w = how === 'fidf' ? fidf : how === 'both' ? fidf * cidf : dff >= 0.8 * nf ? 0 : cidf;
        all += w;
        if (held.has(t)) found += w;
      }
      return all > 0 ? found / all : 0;
    };
    for (const how of ['fidf', 'both', 'drop80'])
      variants[`folder-cov ${how}`] = (c) =>
        fuseAt(c, productWeight(c, c.prefix ? folderCoverage(c, how) : coverageOf(c)));
    // The commitments read over each side's first k candidates rather than the fusion's depth,
    // for every query (`commitments over k`) or for folder queries only (`folder …`), where a short
    // list's last candidates share only a common word with the query (docs/search.md, "Fusion").
    const strengths = [fusion.EVIDENCE_STRENGTH, fusion.COVERAGE_STRENGTH];
    for (const k of [10, 15])
      variants[`commitments over ${k}`] = (c) => fuseAt(c, weightAt(c, ...strengths, k));
    // … and over the fusion's depth in a folder too (the rule before the fifth round).
    variants['folder commitments over 20'] = (c) => fuseAt(c, weightAt(c, ...strengths, DEPTH));
    for (const k of [8, 10, 12, 15])
      variants[`folder commitments over ${k}`] = (c) =>
        fuseAt(c, c.prefix ? weightAt(c, ...strengths, k) : weightAt(c, ...strengths));
    variants[`${name} z-scores`] = (c) => {
      const lexical = c.lexical.slice(0, DEPTH);
      const vector = c.vector.slice(0, DEPTH);
      return combine(zScores(lexical), zScores(vector), productWeight(c), {
        missing: -2,
        floor: 0.25,
        lexicalFloor: 0.1,
      });
    };
  }
  return {
    ...coverageRules,
    [name]: (c) => fuseAt(c, productWeight(c)),
    ...variants,
  };
}

/** Which of an embedder's weights a query of each kind (query-kind.ts) starts from. */
const PRIOR_OF = {
  keywords: 'keywords',
  codeSentence: 'codeSentences',
  sentence: 'sentences',
};

/** Experimental families, by name prefix. */
export function EXPERIMENTS(embedder) {
  const top = (list) => list.slice(0, DEPTH);
  const current = CURRENT[embedder];
  const prior = (c) => (c.keywords ? current.keywords : current.sentences);
  const floors = { floor: 0.25, lexicalFloor: 0.1 };
  const rules = {};
  // Point 2: the normalisation of a short list.
  rules['open (kind, floors)'] = (c) =>
    combine(minMaxOpen(top(c.lexical)), minMax(top(c.vector)), prior(c), floors);
  rules['open both (kind, floors)'] = (c) =>
    combine(minMaxOpen(top(c.lexical)), minMaxOpen(top(c.vector)), prior(c), floors);
  for (const [kw, se] of [
    [0.2, 0.5],
    [0.3, 0.5],
    [0.3, 0.6],
    [0.3, 0.7],
    [0.2, 0.7],
    [0.4, 0.6],
    [0.4, 0.7],
  ])
    rules[`open kw${kw} se${se}`] = (c) =>
      combine(minMaxOpen(top(c.lexical)), minMax(top(c.vector)), c.keywords ? kw : se, floors);
  // Bruch et al.: z-scores, by kind.
  for (const [kw, se] of [
    [0.2, 0.6],
    [0.3, 0.6],
    [0.3, 0.5],
  ])
    rules[`z kw${kw} se${se}`] = (c) =>
      combine(zScores(top(c.lexical)), zScores(top(c.vector)), c.keywords ? kw : se, {
        missing: -2,
      });
  // Query-performance predictors: the kind's weight as a prior, moved by how much more
  // sharply one side's first answers stand out than the other's.
  for (const p of ['peak', 'gap', 'cv', 'drop']) {
    for (const a of [0.5, 1, 2, 4]) {
      rules[`qpp ${p} a${a}`] = (c) => {
        const pl = predictors(c.lexical)[p];
        const pv = predictors(c.vector)[p];
        const w = sigmoid(logit(prior(c)) + a * (pv - pl));
        return combine(minMaxOpen(top(c.lexical)), minMax(top(c.vector)), w, floors);
      };
    }
  }
  // Ratio form (odds multiplied by the predictors' ratio).
  for (const p of ['peak', 'cv', 'drop']) {
    rules[`qpp ratio ${p}`] = (c) => {
      const cl = R(predictors(c.lexical)[p]);
      const cv = R(predictors(c.vector)[p]);
      const w0 = prior(c);
      const w = (w0 * cv) / (w0 * cv + (1 - w0) * cl || 1);
      return combine(minMaxOpen(top(c.lexical)), minMax(top(c.vector)), w, floors);
    };
  }
  // Lexical coverage: the idf share of the query's terms the lexical side's first document
  // holds (needs document frequencies and the document's terms).
  for (const a of [1, 2, 3]) {
    rules[`coverage a${a}`] = (c) => {
      const cov = coverage(c);
      const w = sigmoid(logit(prior(c)) + a * (0.5 - cov));
      return combine(minMaxOpen(top(c.lexical)), minMax(top(c.vector)), w, floors);
    };
  }
  // Both lists opened, the weight from a prior per kind moved by a predictor.
  const priors = (process.env.FUSION_PRIORS ?? '0.1/0.3,0.2/0.3,0.2/0.5,0.2/0.6').split(',');
  for (const pr of priors) {
    const [kw, se] = pr.split('/').map(Number);
    const pri = (c) => (c.keywords ? kw : se);
    rules[`ob ${pr}`] = (c) =>
      combine(minMaxOpen(top(c.lexical)), minMaxOpen(top(c.vector)), pri(c), floors);
    for (const p of ['peak', 'cv', 'drop', 'gap']) {
      for (const a of [1, 2, 4]) {
        rules[`ob ${pr} ${p} a${a}`] = (c) => {
          const pl = predictors(c.lexical)[p];
          const pv = predictors(c.vector)[p];
          const w = sigmoid(logit(pri(c)) + a * (pv - pl));
          return combine(minMaxOpen(top(c.lexical)), minMaxOpen(top(c.vector)), w, floors);
        };
      }
    }
  }
  // Agreement: the overlap of the two sides' first ten moves the weight towards an even
  // split when they agree (either is as good) and towards the prior when they do not.
  for (const a of [1, 2]) {
    rules[`agree a${a}`] = (c) => {
      const o = overlap(c.lexical, c.vector);
      const w = sigmoid(logit(prior(c)) * (1 - Math.min(1, a * o)));
      return combine(minMaxOpen(top(c.lexical)), minMax(top(c.vector)), w, floors);
    };
  }
  return rules;
}
const R = (x) => Math.max(1e-6, x);

/** The idf-weighted share of the query's terms found in the lexical side's first document. */
export function coverage(c) {
  const first = c.lexical[0]?.documentId;
  if (!first || c.terms.length === 0) return 0;
  const held = c.corpus.terms.get(first) ?? new Set();
  let all = 0;
  let found = 0;
  for (const t of c.terms) {
    const w = c.corpus.idf(t);
    all += w;
    if (held.has(t)) found += w;
  }
  return all > 0 ? found / all : 0;
}
