// Validation of rendered Kubernetes manifests, used by check.mjs.
//
// Three layers, because each catches what the others miss:
// * the JSON schemas of kubernetes-models: types, enums, required fields;
// * the TypeScript types of the same models, compiled with excess-property checks: a
//   misspelt or misplaced field anywhere in an object (the JSON schemas accept unknown
//   fields, and so does the API server, silently dropping them);
// * structural checks for the Prometheus Operator CRDs, and references between objects.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';

const require = createRequire(import.meta.url);

/** `apps/v1` → `kubernetes-models/apps/v1`; the core group `v1` → `kubernetes-models/v1`. */
function modelModule(apiVersion, kind) {
  return `kubernetes-models/${apiVersion}/${kind}`;
}

const CRDS = new Set([
  'monitoring.coreos.com/v1/ServiceMonitor',
  'monitoring.coreos.com/v1/PrometheusRule',
]);

/** Problems of one object against the kubernetes-models JSON schema (or the CRD checks). */
export function schemaProblems(object) {
  const key = `${object.apiVersion}/${object.kind}`;
  if (object.kind === 'ServiceMonitor' && CRDS.has(key)) return serviceMonitorProblems(object);
  if (object.kind === 'PrometheusRule' && CRDS.has(key)) return prometheusRuleProblems(object);
  let Model;
  try {
    Model = require(modelModule(object.apiVersion, object.kind))[object.kind];
  } catch {
    return [`${key} is not a Kubernetes 1.27 built-in kind nor a known CRD`];
  }
  if (typeof Model !== 'function') return [`${key}: no model`];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [error.message];
  }
}

/**
 * Compiles every object as a literal of its kubernetes-models TypeScript type, in memory.
 * Returns problems per object index (unknown fields, wrong nesting, wrong types).
 */
export function typeProblems(objects, root) {
  const files = new Map();
  const fileIndex = new Map();
  objects.forEach((object, index) => {
    if (CRDS.has(`${object.apiVersion}/${object.kind}`)) return;
    const name = join(root, 'docker', 'helm', '.type-check', `object-${index}.ts`);
    const type = `I${object.kind}`;
    files.set(
      name,
      `import type { ${type} } from '${modelModule(object.apiVersion, object.kind)}';\n` +
        `export const object: ${type} = ${JSON.stringify(object, null, 2)};\n`,
    );
    fileIndex.set(name, index);
  });
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => files.has(file) || fileExists.call(host, file);
  host.readFile = (file) => files.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) =>
    files.has(file)
      ? ts.createSourceFile(file, files.get(file), language)
      : getSourceFile.call(host, file, language, ...rest);
  const program = ts.createProgram([...files.keys()], options, host);
  const problems = new Map();
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName;
    const index = fileIndex.get(file);
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (index === undefined) {
      problems.set(-1, [...(problems.get(-1) ?? []), `${file ?? 'compiler'}: ${message}`]);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const text = files.get(file).split('\n')[line].trim();
    problems.set(index, [...(problems.get(index) ?? []), `${message} (at ${text})`]);
  }
  return problems;
}

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

function unknownKeys(object, allowed, where) {
  return Object.keys(object ?? {})
    .filter((key) => !allowed.includes(key))
    .map((key) => `${where}: unknown field "${key}"`);
}

function serviceMonitorProblems(object) {
  const problems = [
    ...unknownKeys(object, ['apiVersion', 'kind', 'metadata', 'spec'], 'ServiceMonitor'),
  ];
  const spec = object.spec ?? {};
  problems.push(
    ...unknownKeys(spec, ['selector', 'namespaceSelector', 'endpoints', 'jobLabel'], 'spec'),
  );
  if (!object.metadata?.name) problems.push('metadata.name is missing');
  if (Object.keys(spec.selector?.matchLabels ?? {}).length === 0)
    problems.push('spec.selector.matchLabels is empty: it would select every Service');
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0)
    problems.push('spec.endpoints is empty');
  for (const [i, endpoint] of (spec.endpoints ?? []).entries()) {
    const where = `spec.endpoints[${i}]`;
    problems.push(
      ...unknownKeys(endpoint, ['port', 'path', 'interval', 'scrapeTimeout', 'scheme'], where),
    );
    if (typeof endpoint.port !== 'string' || endpoint.port === '')
      problems.push(`${where}.port must name a Service port`);
    if (endpoint.path !== undefined && !String(endpoint.path).startsWith('/'))
      problems.push(`${where}.path must start with /`);
    for (const field of ['interval', 'scrapeTimeout']) {
      if (endpoint[field] !== undefined && !DURATION.test(endpoint[field]))
        problems.push(`${where}.${field} is not a duration: ${endpoint[field]}`);
    }
  }
  return problems;
}

function prometheusRuleProblems(object) {
  const problems = [
    ...unknownKeys(object, ['apiVersion', 'kind', 'metadata', 'spec'], 'PrometheusRule'),
  ];
  const groups = object.spec?.groups;
  problems.push(...unknownKeys(object.spec, ['groups'], 'spec'));
  if (!Array.isArray(groups) || groups.length === 0) return [...problems, 'spec.groups is empty'];
  const names = new Set();
  for (const [g, group] of groups.entries()) {
    problems.push(...unknownKeys(group, ['name', 'interval', 'rules'], `spec.groups[${g}]`));
    if (!group.name) problems.push(`spec.groups[${g}].name is missing`);
    for (const [r, rule] of (group.rules ?? []).entries()) {
      const where = `spec.groups[${g}].rules[${r}]`;
      problems.push(
        ...unknownKeys(rule, ['alert', 'record', 'expr', 'for', 'labels', 'annotations'], where),
      );
      if (typeof rule.alert !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(rule.alert))
        problems.push(`${where}.alert must be a metric-style name`);
      if (names.has(rule.alert)) problems.push(`${where}: alert ${rule.alert} appears twice`);
      names.add(rule.alert);
      problems.push(...exprProblems(rule.expr, `${where}.expr`));
      if (rule.for !== undefined && !DURATION.test(rule.for))
        problems.push(`${where}.for is not a duration`);
      if (!['critical', 'warning', 'info'].includes(rule.labels?.severity))
        problems.push(`${where}.labels.severity must be critical, warning or info`);
      for (const field of ['summary', 'description']) {
        if (typeof rule.annotations?.[field] !== 'string' || rule.annotations[field] === '')
          problems.push(`${where}.annotations.${field} is missing`);
      }
    }
  }
  return problems;
}

/** No PromQL parser here: balanced brackets and quotes, and no Helm left-overs. */
function exprProblems(expr, where) {
  if (typeof expr !== 'string' || expr.trim() === '') return [`${where} is empty`];
  if (expr.includes('{{') || expr.includes('<no value>'))
    return [`${where} holds unrendered template text`];
  const stack = [];
  const pairs = { ')': '(', '}': '{', ']': '[' };
  let quote = null;
  for (const char of expr) {
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if ('({['.includes(char)) stack.push(char);
    else if (char in pairs && stack.pop() !== pairs[char])
      return [`${where} has unbalanced "${char}"`];
  }
  return quote || stack.length > 0 ? [`${where} has an unclosed quote or bracket`] : [];
}

/**
 * References between rendered objects (ConfigMap, Secret, Service, ServiceAccount, scale
 * target) must resolve inside the render or to a name in `external` (`Kind/name`).
 */
export function referenceProblems(objects, external) {
  const present = new Set([...objects.map((o) => `${o.kind}/${o.metadata?.name}`), ...external]);
  const problems = [];
  const need = (from, ref) => {
    if (!present.has(ref))
      problems.push(`${from} refers to ${ref}, which is neither rendered nor declared external`);
  };
  for (const object of objects) {
    const from = `${object.kind}/${object.metadata?.name}`;
    const pod = object.spec?.template?.spec;
    if (pod) {
      if (pod.serviceAccountName) need(from, `ServiceAccount/${pod.serviceAccountName}`);
      for (const container of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
        for (const source of container.envFrom ?? []) {
          if (source.configMapRef) need(from, `ConfigMap/${source.configMapRef.name}`);
          if (source.secretRef) need(from, `Secret/${source.secretRef.name}`);
        }
        for (const variable of container.env ?? []) {
          const secret = variable.valueFrom?.secretKeyRef;
          if (secret) need(from, `Secret/${secret.name}`);
          const config = variable.valueFrom?.configMapKeyRef;
          if (config) need(from, `ConfigMap/${config.name}`);
        }
      }
    }
    if (object.kind === 'Ingress') {
      for (const rule of object.spec?.rules ?? []) {
        for (const path of rule.http?.paths ?? [])
          need(from, `Service/${path.backend?.service?.name}`);
      }
    }
    if (object.kind === 'HorizontalPodAutoscaler') {
      need(from, `${object.spec.scaleTargetRef.kind}/${object.spec.scaleTargetRef.name}`);
    }
  }
  return [...problems, ...selectorProblems(objects)];
}

const matches = (selector, labels) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);

/** Label selectors must pick the intended pods or Services, and only those. */
function selectorProblems(objects) {
  const problems = [];
  const workloads = objects.filter((o) => o.spec?.template?.metadata);
  const deployments = workloads.filter((o) => o.kind === 'Deployment');
  const services = objects.filter((o) => o.kind === 'Service');
  for (const deployment of deployments) {
    if (!matches(deployment.spec.selector?.matchLabels, deployment.spec.template.metadata.labels))
      problems.push(
        `Deployment/${deployment.metadata.name}: spec.selector does not match its pod labels`,
      );
  }
  for (const service of services) {
    const selected = workloads.filter((w) =>
      matches(service.spec.selector, w.spec.template.metadata.labels),
    );
    const from = `Service/${service.metadata.name}`;
    if (selected.length === 0) problems.push(`${from} selects no pods`);
    for (const workload of selected.filter((w) => w.kind !== 'Deployment'))
      problems.push(`${from} also selects the pods of ${workload.kind}/${workload.metadata.name}`);
    for (const port of service.spec.ports ?? []) {
      if (typeof port.targetPort !== 'string') continue;
      const named = selected.every((w) =>
        w.spec.template.spec.containers.some((c) =>
          (c.ports ?? []).some((p) => p.name === port.targetPort),
        ),
      );
      if (!named)
        problems.push(`${from}: targetPort ${port.targetPort} is not a container port name`);
    }
  }
  for (const budget of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
    const selected = workloads.filter((w) =>
      matches(budget.spec.selector?.matchLabels, w.spec.template.metadata.labels),
    );
    if (selected.length !== 1 || selected[0].kind !== 'Deployment')
      problems.push(
        `PodDisruptionBudget/${budget.metadata.name} must select exactly the Deployment's pods`,
      );
  }
  for (const monitor of objects.filter((o) => o.kind === 'ServiceMonitor')) {
    const selected = services.filter((s) =>
      matches(monitor.spec.selector?.matchLabels, s.metadata.labels),
    );
    const from = `ServiceMonitor/${monitor.metadata.name}`;
    if (selected.length !== 1)
      problems.push(`${from} selects ${selected.length} Services, expected 1`);
    for (const endpoint of monitor.spec.endpoints ?? []) {
      if (!selected.every((s) => s.spec.ports.some((p) => p.name === endpoint.port)))
        problems.push(`${from}: port ${endpoint.port} is not a port name of the selected Service`);
    }
  }
  return problems;
}
