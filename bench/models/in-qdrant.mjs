// The embedding-model scenario's retrieval runs (scenarios/55-models.mjs) again with the lexical
// side in Qdrant (LEXICAL_STORE=qdrant), on servers and PostgreSQL clusters of their own and a
// Qdrant node started here (bench/qdrant.mjs), each server a collection of its own: nDCG@10
// against the local index's of the same run (retrieval/store-comparison.mjs), and the
// pipeline's rate into Qdrant against its rate into the local index. Without a Qdrant binary
// it says so in one line and measures nothing.
import { round } from '../lib.mjs';
import { qdrantBinary, qdrantMode, startQdrant } from '../qdrant.mjs';
import { compareStores } from '../retrieval/store-comparison.mjs';

/**
 * @param {object} context
 * @param {Function} context.retrieval  55-models.mjs's `retrieval(label, own, say, env, provider)`
 * @param {Function} context.own  its `own(what, env)`
 * @param {(message: string) => void} context.say
 * @param {{stop: () => Promise<void>}[]} context.owned  what the scenario stops at its end
 * @param {{label: string, env: object, provider?: string, local: object}[]} context.systems
 *   each system measured with the local index (`local`: what `retrieval` returned) and how
 * @returns {Promise<object[] | undefined>} per system: the comparison and both rates
 */
export async function inQdrant({ retrieval, own, say, owned, systems }) {
  const binary = qdrantBinary();
  if (!binary.path) {
    say(`the lexical side in Qdrant is not measured: ${binary.missing}`);
    return undefined;
  }
  const qdrant = await startQdrant();
  owned.push({ stop: () => qdrant.stop() });
  say(`Qdrant node on ${qdrant.url}`);
  const results = [];
  for (const [i, system] of systems.entries()) {
    const measured = await retrieval(
      `${system.label} (Qdrant)`,
      own,
      say,
      { ...system.env, ...qdrantMode(qdrant.url, `models_${i}`) },
      system.provider,
    );
    measured.watch.stop();
    await measured.second.stop();
    await measured.first.server.stop();
    const comparison = compareStores(system.local.outcome, measured.outcome, system.label);
    const rates = {
      local: system.local.documentsPerSecond,
      qdrant: measured.documentsPerSecond,
      ratio: round(measured.documentsPerSecond / system.local.documentsPerSecond),
    };
    for (const line of comparison.lines) say(line);
    say(
      `${system.label}: the pipeline ${rates.qdrant} documents/s into Qdrant against ${rates.local} into the local index = ${rates.ratio} ×`,
    );
    results.push({
      label: system.label,
      rows: comparison.rows,
      checks: comparison.checks.map((c) => c.line),
      rates,
      outcome: measured.outcome,
    });
  }
  return results;
}

/** The lines the scenario's summary prints of {@link inQdrant}'s results. */
export function inQdrantLines(results = []) {
  return results.flatMap((system) => [
    '',
    ...system.checks,
    `${system.label}: pipeline into Qdrant ${system.rates.qdrant} documents/s, into the local index ${system.rates.local}: ${system.rates.ratio} ×`,
  ]);
}
