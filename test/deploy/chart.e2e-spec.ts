/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML; the
   shapes are checked by npm run chart:check, the values here by the assertions. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { loadDatabaseLocation } from '../../src/config/database-location';
import { loadConfig } from '../../src/config/load-config';
import { ROOT } from './node-process';

/**
 * Assertions on the objects the Helm chart renders (docker/helm/agent-data). Schema
 * validation of every object is `npm run chart:check`; this file pins the behaviour an
 * operator relies on: probes, hardening, secrets kept out of ConfigMaps, the migration hook,
 * scraping and alerting.
 */
const CHART = join(ROOT, 'docker', 'helm', 'agent-data');
const HELM = join(ROOT, 'node_modules', '.bin', 'helm');

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: any;
};

function render(valueFile: string, ...set: string[]): K8sObject[] {
  const args = ['template', 'kb', CHART, '--namespace', 'knowledge'];
  args.push('-f', join(CHART, 'ci', valueFile), ...set.flatMap((s) => ['--set', s]));
  const output = execFileSync(HELM, args, { encoding: 'utf8' });
  return (yaml.loadAll(output) as (K8sObject | null)[]).filter((o): o is K8sObject => !!o);
}

function valueFile(name: string): Record<string, any> {
  return yaml.load(readFileSync(join(CHART, 'ci', name), 'utf8')) as Record<string, any>;
}

const one = (objects: K8sObject[], kind: string, name?: string): K8sObject => {
  const found = objects.filter((o) => o.kind === kind && (!name || o.metadata.name === name));
  expect(found.map((o) => `${o.kind}/${o.metadata.name}`)).toHaveLength(1);
  return found[0];
};

const serverContainer = (objects: K8sObject[]) =>
  one(objects, 'Deployment').spec.template.spec.containers[0];
const migrationJob = (objects: K8sObject[]) => one(objects, 'Job');
const envOf = (container: any): Record<string, any> =>
  Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

describe('Helm chart: rendered objects', () => {
  const minimal = render('minimal-values.yaml');
  const full = render('full-values.yaml');
  const existing = render('existing-secret-values.yaml');
  const all = { minimal, full, existing };

  describe.each(Object.entries(all))('%s values', (_name, objects) => {
    it('probes liveness on /health/live and readiness on /health/ready, on the http port', () => {
      const container = serverContainer(objects);
      expect(container.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
      expect(container.startupProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    });

    it('runs the server and the migration Job non-root, read-only, unprivileged', () => {
      for (const workload of [one(objects, 'Deployment'), migrationJob(objects)]) {
        const pod = workload.spec.template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
        expect(pod.automountServiceAccountToken).toBe(false);
        for (const container of pod.containers) {
          expect(container.securityContext).toEqual({
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          });
          // The only writable path the server needs with a read-only root.
          const tmp = container.volumeMounts.find((m: any) => m.mountPath === '/tmp');
          expect(pod.volumes.find((v: any) => v.name === tmp.name).emptyDir).toBeDefined();
        }
      }
    });

    it('migrates in a pre-install,pre-upgrade hook Job; the pods never migrate', () => {
      const job = migrationJob(objects);
      expect(job.metadata.annotations).toMatchObject({
        'helm.sh/hook': 'pre-install,pre-upgrade',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
      const container = job.spec.template.spec.containers[0];
      expect(container.args).toEqual(['node', 'dist/src/migrate.js']);
      expect(container.command).toBeUndefined(); // the image's tini stays PID 1
      expect(container.image).toBe(serverContainer(objects).image);
      expect(envOf(container).DATABASE_URL).toEqual({
        secretKeyRef: { name: expect.any(String), key: 'DATABASE_URL' },
      });
      expect(envOf(serverContainer(objects))).toMatchObject({
        MIGRATIONS_RUN: 'false',
        HOST: '0.0.0.0',
        PORT: '8080',
      });
    });

    it('gives the Job a DATABASE_URL Secret that exists before the release objects do', () => {
      const job = migrationJob(objects);
      const name = envOf(job.spec.template.spec.containers[0]).DATABASE_URL.secretKeyRef.name;
      const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === name);
      if (objects === existing) {
        expect(name).toBe('agent-data-credentials');
        expect(secret).toBeUndefined();
      } else {
        expect(secret!.metadata.annotations).toMatchObject({
          'helm.sh/hook': 'pre-install,pre-upgrade',
        });
        expect(Number(secret!.metadata.annotations!['helm.sh/hook-weight'])).toBeLessThan(
          Number(job.metadata.annotations!['helm.sh/hook-weight']),
        );
      }
    });

    it('gives the server and the migration Job settings each of them accepts', () => {
      // What Kubernetes gives each container: envFrom the ConfigMap and Secret, then env.
      const data = (kind: string, name: string): Record<string, string> => {
        if (objects === existing && name === 'agent-data-credentials') {
          return {
            DATABASE_URL: 'postgres://u:p@db:5432/kb',
            API_KEYS: 'ops:ci-admin-key-0123456789:admin',
          };
        }
        const object = one(objects, kind, name);
        if (kind === 'ConfigMap') return object.data;
        return Object.fromEntries(
          Object.entries(object.data as Record<string, string>).map(([k, v]) => [
            k,
            Buffer.from(v, 'base64').toString(),
          ]),
        );
      };
      const environment = (container: any): Record<string, string> => {
        const env: Record<string, string> = {};
        for (const from of container.envFrom ?? []) {
          Object.assign(
            env,
            from.configMapRef
              ? data('ConfigMap', from.configMapRef.name)
              : data('Secret', from.secretRef.name),
          );
        }
        for (const entry of container.env) {
          const ref = entry.valueFrom?.secretKeyRef;
          env[entry.name] = ref ? data('Secret', ref.name)[ref.key] : entry.value;
        }
        return env;
      };
      expect(() => loadConfig(environment(serverContainer(objects)))).not.toThrow();
      const job = migrationJob(objects).spec.template.spec.containers[0];
      expect(() => loadDatabaseLocation(environment(job))).not.toThrow();
    });

    it('never routes Service traffic to the migration pod', () => {
      const selector = one(objects, 'Service').spec.selector;
      const jobLabels = migrationJob(objects).spec.template.metadata.labels;
      const podLabels = one(objects, 'Deployment').spec.template.metadata.labels;
      const selects = (labels: Record<string, string>) =>
        Object.entries(selector).every(([key, value]) => labels[key] === value);
      expect(selects(podLabels)).toBe(true);
      expect(selects(jobLabels)).toBe(false);
    });

    it('leaves time for the preStop pause and the drain before the kill', () => {
      const pod = one(objects, 'Deployment').spec.template.spec;
      const container = serverContainer(objects);
      const pause = Number(container.lifecycle.preStop.exec.command[1]);
      const drainMs = Number(envOf(container).SHUTDOWN_TIMEOUT_MS);
      expect(pause).toBeGreaterThan(0);
      expect(drainMs).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(pause * 1000 + drainMs);
    });
  });

  it('keeps every credential out of the ConfigMap and in the Secret', () => {
    for (const [file, objects] of [
      ['minimal-values.yaml', minimal],
      ['full-values.yaml', full],
    ] as const) {
      const secrets = valueFile(file).secrets as Record<string, string>;
      const configMap = one(objects, 'ConfigMap');
      const plain = JSON.stringify(configMap);
      for (const value of Object.values(secrets)) expect(plain).not.toContain(value);
      for (const name of [
        'DATABASE_URL',
        'API_KEYS',
        'OPENAI_API_KEY',
        'QDRANT_API_KEY',
        'GPT_ROUTE_TOKEN',
      ])
        expect(configMap.data).not.toHaveProperty(name);

      const secret = one(objects, 'Secret', 'kb-agent-data');
      const decoded = Object.fromEntries(
        Object.entries(secret.data as Record<string, string>).map(([k, v]) => [
          k,
          Buffer.from(v, 'base64').toString('utf8'),
        ]),
      );
      expect(decoded).toMatchObject({
        DATABASE_URL: secrets.databaseUrl,
        API_KEYS: secrets.apiKeys,
      });
      const container = serverContainer(objects);
      expect(container.envFrom).toEqual([
        { configMapRef: { name: configMap.metadata.name } },
        { secretRef: { name: 'kb-agent-data' } },
      ]);
    }
    expect(one(full, 'ConfigMap').data).toMatchObject({
      QDRANT_URL: 'http://qdrant.vectors.svc:6333',
      EMBEDDINGS_DIMENSIONS: '384',
    });
  });

  it('with existingSecret renders no Secret and reads that one', () => {
    expect(existing.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(serverContainer(existing).envFrom).toContainEqual({
      secretRef: { name: 'agent-data-credentials' },
    });
    // One replica: no PodDisruptionBudget that would block node drains.
    expect(existing.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
    expect(one(minimal, 'PodDisruptionBudget').spec.maxUnavailable).toBe(1);
  });

  it('annotates the pods for scraping on the port that serves /metrics', () => {
    const pod = one(minimal, 'Deployment').spec.template;
    expect(pod.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(serverContainer(minimal).ports[0].containerPort),
      'prometheus.io/path': '/metrics',
    });
    const off = one(existing, 'Deployment').spec.template.metadata.annotations;
    expect(Object.keys(off).filter((k) => k.startsWith('prometheus.io/'))).toEqual([]);
  });

  it('points the ServiceMonitor at the Service port that reaches the container', () => {
    const monitor = one(full, 'ServiceMonitor');
    const service = one(full, 'Service');
    expect(monitor.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
    expect(monitor.spec.endpoints).toEqual([
      { port: 'http', path: '/metrics', interval: '30s', scrapeTimeout: '10s' },
    ]);
    const port = service.spec.ports.find((p: any) => p.name === 'http');
    expect(port.targetPort).toBe(serverContainer(full).ports[0].name);
    expect(monitor.spec.selector.matchLabels).toEqual(
      expect.objectContaining({ 'app.kubernetes.io/instance': 'kb' }),
    );
  });

  it('keeps SSE unbuffered at ingress-nginx and routes neither /metrics nor /health', () => {
    const ingress = one(full, 'Ingress');
    expect(ingress.metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-read-timeout': '300',
    });
    const paths = ingress.spec.rules[0].http.paths.map((p: any) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/mcp',
        '/readonly',
        '/gpt',
        '/gpt-full',
        '/mcp-readonly',
        '/documents',
      ]),
    );
    expect(paths.filter((p: string) => /^\/(metrics|health)/.test(p))).toEqual([]);
    expect(ingress.spec.tls).toEqual([
      { secretName: 'kb-example-com-tls', hosts: ['kb.example.com'] },
    ]);
  });

  it('alerts on vector lag, documents in error, the listener, the database and the 5xx ratio', () => {
    const rules = one(full, 'PrometheusRule').spec.groups[0].rules as {
      alert: string;
      expr: string;
      for: string;
    }[];
    const rule = (name: string) => rules.find((r) => r.alert === name)!;
    const selector = 'job="kb-agent-data",namespace="knowledge"';
    expect(rule('AgentDataVectorSyncLagHigh')).toMatchObject({
      expr: `max by (namespace, job) (vector_sync_lag_seconds{${selector}}) > 30`,
      for: '5m',
    });
    expect(rule('AgentDataVectorDocumentsInError').expr).toBe(
      `max by (namespace, job) (vector_sync_error_documents{${selector}}) > 0`,
    );
    expect(rule('AgentDataVectorListenerDown').expr).toBe(
      `vector_sync_listener_up{${selector}} == 0`,
    );
    expect(rule('AgentDataDatabaseUnreachable')).toMatchObject({
      expr: `increase(metrics_scrape_errors_total{${selector},collector="vector_queue"}[2m]) > 0`,
      for: '2m',
    });
    expect(rule('AgentDataHighErrorRatio').expr).toMatch(
      /status=~"5\.\."\}\[5m\]\)\) \/ sum by \(namespace, job\) \(rate\(http_request_duration_seconds_count\{.*\}\[5m\]\)\)\) > 0\.05$/,
    );
  });

  it('gives the migration Job the same extra variables and volumes as the server (a CA bundle)', () => {
    const server = serverContainer(full);
    const job = migrationJob(full).spec.template.spec;
    expect(envOf(job.containers[0]).NODE_EXTRA_CA_CERTS).toBe('/etc/agent-data/ca/ca.crt');
    expect(envOf(server).NODE_EXTRA_CA_CERTS).toBe('/etc/agent-data/ca/ca.crt');
    const mount = { name: 'postgres-ca', mountPath: '/etc/agent-data/ca', readOnly: true };
    expect(server.volumeMounts).toContainEqual(mount);
    expect(job.containers[0].volumeMounts).toContainEqual(mount);
    expect(job.volumes).toContainEqual({
      name: 'postgres-ca',
      secret: { secretName: 'postgres-ca' },
    });
  });

  it('rolls the pods when the settings or the credentials change', () => {
    const checksum = (objects: K8sObject[]) =>
      one(objects, 'Deployment').spec.template.metadata.annotations;
    const before = checksum(minimal);
    const config = checksum(render('minimal-values.yaml', 'config.LOG_LEVEL=debug'));
    const secret = checksum(render('minimal-values.yaml', 'secrets.openaiApiKey=sk-other'));
    expect(config['checksum/config']).not.toBe(before['checksum/config']);
    expect(config['checksum/secret']).toBe(before['checksum/secret']);
    expect(secret['checksum/secret']).not.toBe(before['checksum/secret']);
  });
});
