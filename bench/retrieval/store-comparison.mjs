// The retrieval benchmark's answers with the lexical side in the server's memory (`local`) and
// in Qdrant (LEXICAL_STORE=qdrant), measured in the same run: nDCG@10 per mode and kind side by
// side, the target (every overall row within 0.01 of local) as PASS and MISS lines, and the
// queries whose answers differ most, to find out why.

/**
 * The overall rows the target is checked on: the graded set, its halves, held-back, and the
 * second and linked corpora's overall rows.
 */
export const OVERALL_KINDS = ['overall', 'A overall', 'B overall', 'held-back'];
/** Largest difference allowed on an overall row. */
export const TARGET_DIFFERENCE = 0.01;
const MODES = ['hybrid', 'lexical', 'vector'];

/**
 * @param {{table: object[], perQuery: object[]}} local  runRetrieval's outcome, local index
 * @param {{table: object[], perQuery: object[]}} qdrant  the same with the index in Qdrant
 * @param {string} label  what was measured (the embedder), for the lines
 * @returns {{rows: object[], checks: {pass: boolean, line: string}[], lines: string[]}}
 */
export function compareStores(local, qdrant, label) {
  const rows = [];
  const checks = [];
  const prefixes = [
    '',
    ...(hasMode(local.table, 'second corpus: hybrid') ? ['second corpus: '] : []),
    ...(hasMode(local.table, 'linked corpus: hybrid') ? ['linked corpus: '] : []),
  ];
  for (const prefix of prefixes) {
    for (const base of MODES) {
      const mode = `${prefix}${base}`;
      for (const l of local.table.filter((r) => r.mode === mode)) {
        const q = qdrant.table.find((r) => r.mode === mode && r.kind === l.kind);
        if (!q) continue;
        const overall = prefix === '' ? OVERALL_KINDS.includes(l.kind) : l.kind === 'overall';
        const difference = q.ndcg10 - l.ndcg10;
        const row = {
          mode,
          kind: l.kind,
          queries: l.queries,
          local: l.ndcg10,
          qdrant: q.ndcg10,
          difference,
          overall,
        };
        rows.push(row);
        if (overall) {
          const pass = Math.abs(difference) <= TARGET_DIFFERENCE;
          checks.push({
            pass,
            ...row,
            line: `${pass ? 'PASS' : 'MISS'} ${label}, ${mode} ${l.kind}: qdrant ${f(q.ndcg10)} against local ${f(l.ndcg10)} (${signed(difference)}; target within ${TARGET_DIFFERENCE})`,
          });
        }
      }
    }
  }
  const width = Math.max(...rows.map((r) => `${r.mode} ${r.kind}`.length));
  const lines = [
    `${label}: nDCG@10, local index and Qdrant (same run)`,
    `${'mode, kind'.padEnd(width)}  queries  local   qdrant  difference`,
    ...rows.map(
      (r) =>
        `${`${r.mode} ${r.kind}`.padEnd(width)}  ${String(r.queries).padStart(7)}  ${f(r.local)}   ${f(r.qdrant)}   ${signed(r.difference)}${r.overall ? '  (overall)' : ''}`,
    ),
    ...checks.map((c) => c.line),
    ...differingQueries(local.perQuery, qdrant.perQuery),
  ];
  return { rows, checks, lines };
}

/** Per mode, the queries whose nDCG@10 differs most between the two, with both rankings' heads. */
function differingQueries(local, qdrant, shown = 8) {
  const lines = [];
  const modes = [...new Set(local.map((r) => r.mode))].filter((m) =>
    MODES.some((base) => m === base || m === `second corpus: ${base}`),
  );
  for (const mode of modes) {
    const other = new Map(qdrant.filter((r) => r.mode === mode).map((r) => [r.id, r]));
    const pairs = local
      .filter((r) => r.mode === mode && other.has(r.id))
      .map((l) => ({ l, q: other.get(l.id), d: other.get(l.id).ndcg10 - l.ndcg10 }));
    const differ = pairs.filter((p) => p.l.ranked.join('\n') !== p.q.ranked.join('\n'));
    const changed = pairs.filter((p) => Math.abs(p.d) > 1e-9);
    lines.push(
      `${mode}: ${differ.length} of ${pairs.length} queries ranked differently, ${changed.length} with another nDCG@10 (${changed.filter((p) => p.d > 0).length} better in Qdrant, ${changed.filter((p) => p.d < 0).length} worse)`,
    );
    for (const { l, q, d } of changed
      .sort((a, b) => Math.abs(b.d) - Math.abs(a.d))
      .slice(0, shown)) {
      // From the first rank where they part, three results of each with their scores.
      const at = Math.max(
        0,
        l.ranked.findIndex((id, i) => q.ranked[i] !== id),
      );
      const part = (r) =>
        r.ranked
          .slice(at, at + 3)
          .map((id, i) => `${id}${r.scores ? ` ${r.scores[at + i]}` : ''}`)
          .join(', ') || '(nothing)';
      lines.push(
        `  ${signed(d)} ${l.id} "${l.query}"${l.prefix ? ` in ${l.prefix}` : ''}, from rank ${at + 1}: local ${part(l)} | qdrant ${part(q)}`,
      );
    }
  }
  return lines;
}

function hasMode(table, mode) {
  return table.some((r) => r.mode === mode);
}

function f(value) {
  return value.toFixed(3);
}

function signed(value) {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(3)}`;
}
