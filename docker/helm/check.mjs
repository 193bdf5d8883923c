// `npm run chart:check` (also run by .ci/run): the Helm chart's checks, offline.
//
// 1. `helm lint --strict` and `helm template` with three value sets (defaults plus the
//    required credentials; ingress + HPA + ServiceMonitor + PrometheusRule; an existing
//    Secret), every rendered object validated (manifest-checks.mjs);
// 2. values the chart must refuse, with the message an operator needs;
// 3. docker/prometheus/alerts.yml equals the chart's PrometheusRule (`--write-alerts`
//    regenerates it);
// 4. the values table of the chart README covers values.yaml, and names nothing else.
// Exits 1 with every problem listed when any check fails.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import * as yaml from 'js-yaml';
import prettier from 'prettier';
import { referenceProblems, schemaProblems, typeProblems } from './manifest-checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const CHART = join(HERE, 'agent-data');
const HELM = join(ROOT, 'node_modules', '.bin', 'helm');
const ALERTS = join(ROOT, 'docker', 'prometheus', 'alerts.yml');
const RELEASE = 'agent-data';
const NAMESPACE = 'agent-data';

/** `external`: objects the value set expects to exist already (`Kind/name`). */
const VALUE_SETS = [
  { name: 'defaults', files: ['ci/minimal-values.yaml'], external: [] },
  {
    name: 'ingress, HPA, ServiceMonitor, PrometheusRule',
    files: ['ci/full-values.yaml'],
    external: [],
  },
  {
    name: 'existing Secret',
    files: ['ci/existing-secret-values.yaml'],
    external: [
      'Secret/agent-data-credentials',
      'ServiceAccount/agent-data',
      'PersistentVolumeClaim/agent-data-backups',
    ],
  },
];

const minimal = ['-f', join(CHART, 'ci/minimal-values.yaml')];
const REFUSALS = [
  {
    name: 'no credentials at all',
    args: [],
    message: 'secrets.databaseUrl is required (or existingSecret)',
  },
  {
    name: 'neither API keys nor OAuth',
    args: ['--set', 'secrets.databaseUrl=postgres://u:p@db:5432/kb'],
    message: 'secrets.apiKeys or config.OAUTH_ISSUER is required (or existingSecret)',
  },
  {
    name: 'OAuth without the URL clients use',
    args: [...minimal, '--set-string', 'config.OAUTH_ISSUER=https://id.example.com/realms/kb'],
    message: 'config.OAUTH_RESOURCE is required with config.OAUTH_ISSUER',
  },
  {
    name: 'the introspection secret in the ConfigMap settings',
    args: [...minimal, '--set-string', 'config.OAUTH_INTROSPECTION_CLIENT_SECRET=leak'],
    message: 'config: Property name of "OAUTH_INTROSPECTION_CLIENT_SECRET" does not match',
  },
  {
    name: 'a credential in the ConfigMap settings',
    args: [...minimal, '--set-string', 'config.OPENAI_API_KEY=sk-leak'],
    message: 'config: Property name of "OPENAI_API_KEY" does not match',
  },
  {
    name: 'a number where the environment needs a string',
    args: [...minimal, '--set', 'config.EMBEDDINGS_DIMENSIONS=1536'],
    message: 'config.EMBEDDINGS_DIMENSIONS: Invalid type. Expected: string',
  },
  {
    name: 'existingSecret and secrets together',
    args: [...minimal, '--set', 'existingSecret=mine'],
    message: 'set either existingSecret or secrets.* (apiKeys, databaseUrl), not both',
  },
  {
    // The threshold is also the `for` of AgentDataSourceNeverSynced (`<n>s`): whole seconds.
    name: 'a source staleness that is not whole seconds',
    args: [...minimal, '--set-json', 'prometheusRule.sourceStaleSeconds=1.5'],
    message: 'prometheusRule.sourceStaleSeconds: Invalid type. Expected: integer',
  },
  {
    name: 'a misspelt value',
    args: [...minimal, '--set', 'ingress.enable=true'],
    message: 'ingress: Additional property enable is not allowed',
  },
];

const failures = [];
const report = (name, problems) => {
  if (problems.length === 0) {
    console.log(`ok    ${name}`);
  } else {
    console.log(`FAIL  ${name}`);
    for (const problem of problems) console.log(`        ${problem}`);
    failures.push(name);
  }
};

function helm(args) {
  const result = spawnSync(HELM, args, { encoding: 'utf8', cwd: ROOT });
  if (result.error) throw new Error(`cannot run ${relative(ROOT, HELM)}: ${result.error.message}`);
  return {
    ok: result.status === 0,
    output: `${result.stdout}${result.stderr}`,
    stdout: result.stdout,
  };
}

function template(args) {
  const result = helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...args]);
  if (!result.ok) return { error: result.output.trim(), objects: [] };
  return {
    objects: yaml.loadAll(result.stdout).filter((doc) => doc !== null && doc !== undefined),
  };
}

const valueArgs = (set) => set.files.flatMap((file) => ['-f', join(CHART, file)]);

// ---- 1. lint, render, validate ----------------------------------------------------------
const rendered = [];
for (const set of VALUE_SETS) {
  const lint = helm(['lint', '--strict', CHART, '--namespace', NAMESPACE, ...valueArgs(set)]);
  report(`helm lint --strict (${set.name})`, lint.ok ? [] : [lint.output.trim()]);
  const { objects, error } = template(valueArgs(set));
  report(`helm template (${set.name}): ${objects.length} objects`, error ? [error] : []);
  rendered.push(...objects.map((object) => ({ set, object })));
}
const types = typeProblems(
  rendered.map((r) => r.object),
  ROOT,
);
report('TypeScript compiler setup', types.get(-1) ?? []);
for (const set of VALUE_SETS) {
  const problems = [];
  rendered.forEach(({ set: owner, object }, index) => {
    if (owner !== set) return;
    const label = `${object.kind}/${object.metadata?.name}`;
    for (const problem of [...schemaProblems(object), ...(types.get(index) ?? [])])
      problems.push(`${label}: ${problem}`);
  });
  const objects = rendered.filter((r) => r.set === set).map((r) => r.object);
  problems.push(...referenceProblems(objects, set.external));
  report(`Kubernetes schemas, field names, references (${set.name})`, problems);
}

// ---- 2. refusals -------------------------------------------------------------------------
for (const refusal of REFUSALS) {
  const result = template(refusal.args);
  const problems = result.error
    ? result.error.includes(refusal.message)
      ? []
      : [`refused, but without "${refusal.message}":`, result.error]
    : ['rendered although it must be refused'];
  report(`refuses ${refusal.name}`, problems);
}

// ---- 3. the compose stack's alerts are the chart's alerts --------------------------------
const composeRules = template([
  ...minimal,
  '--set',
  'prometheusRule.enabled=true',
  '--set-string',
  'prometheusRule.selector=job="agent-data"',
  '--show-only',
  'templates/prometheusrule.yaml',
]);
const groups = composeRules.objects[0]?.spec?.groups;
if (!groups) {
  report('PrometheusRule renders for the compose stack', [composeRules.error ?? 'no groups']);
} else if (process.argv.includes('--write-alerts')) {
  const header =
    '# Generated from docker/helm/agent-data/templates/prometheusrule.yaml by\n' +
    '# `node docker/helm/check.mjs --write-alerts` (job="agent-data", as in prometheus.yml).\n' +
    '# Edit the chart template, then regenerate; `npm run chart:check` fails when they differ.\n';
  const text = header + yaml.dump({ groups }, { lineWidth: -1, noRefs: true });
  const style = (await prettier.resolveConfig(ALERTS)) ?? {};
  writeFileSync(ALERTS, await prettier.format(text, { ...style, filepath: ALERTS }));
  console.log(`wrote ${relative(ROOT, ALERTS)}`);
} else {
  let problems;
  try {
    const current = yaml.load(readFileSync(ALERTS, 'utf8'));
    problems = isDeepStrictEqual(current?.groups, groups)
      ? []
      : [
          `${relative(ROOT, ALERTS)} differs from the chart: run node docker/helm/check.mjs --write-alerts`,
        ];
  } catch (error) {
    problems = [error.message];
  }
  report('docker/prometheus/alerts.yml matches the chart PrometheusRule', problems);
}

// ---- 4. README values table ---------------------------------------------------------------
function leafPaths(value, prefix = []) {
  if (
    value &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length > 0
  ) {
    return Object.entries(value).flatMap(([key, child]) => leafPaths(child, [...prefix, key]));
  }
  return [prefix.join('.')];
}
{
  const leaves = leafPaths(yaml.load(readFileSync(join(CHART, 'values.yaml'), 'utf8')));
  const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('\n## Values')).split(/\n## (?!Values)/)[0];
  const documented = [...table.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1]);
  const covered = (leaf) => documented.some((d) => leaf === d || leaf.startsWith(`${d}.`));
  const exists = (d) => leaves.some((leaf) => leaf === d || leaf.startsWith(`${d}.`));
  report('chart README documents every value, and only existing ones', [
    ...leaves.filter((leaf) => !covered(leaf)).map((leaf) => `not documented: ${leaf}`),
    ...documented.filter((d) => !exists(d)).map((d) => `documented but not in values.yaml: ${d}`),
  ]);
}

if (failures.length > 0) {
  console.log(`\nchart check FAILED: ${failures.length} check(s) above`);
  process.exit(1);
}
console.log('\nchart check passed');
