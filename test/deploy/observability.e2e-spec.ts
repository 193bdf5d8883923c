import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import request from 'supertest';
import { startTestApp, TestApp } from '../support/app';
import { ROOT } from './node-process';

/**
 * The Grafana dashboard and the alert rules query metrics by name and label: a renamed
 * metric or label would leave a panel empty and an alert silent without any error. This
 * checks every name they use against what the server really exposes on /metrics.
 */
interface Dashboard {
  panels: { id: number; type: string; title: string; targets?: { expr: string }[] }[];
}
interface RuleFile {
  groups: { rules: { alert: string; expr: string }[] }[];
}

const dashboard = JSON.parse(
  readFileSync(join(ROOT, 'docker', 'grafana', 'agent-data.json'), 'utf8'),
) as Dashboard;
const alerts = yaml.load(
  readFileSync(join(ROOT, 'docker', 'prometheus', 'alerts.yml'), 'utf8'),
) as RuleFile;

const queries: { where: string; expr: string }[] = [
  ...dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
  ),
  ...alerts.groups.flatMap((group) =>
    group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  ),
];

/** Every metric in our queries carries a label selector, so `name{` finds them all. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((match) => match[1]);
}

/** `name{a="x",b=~"y"}` → the label names used in its selector. */
function selectorLabels(expr: string): { metric: string; labels: string[] }[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)].map((match) => ({
    metric: match[1],
    labels: [...match[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map((m) => m[1]),
  }));
}

describe('dashboard and alerts query what the server exposes', () => {
  let t: TestApp;
  let exposition: string;
  /** Metric family name → type, from the `# TYPE` lines. */
  let families: Map<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    // One request on a real route, so the HTTP histogram has a series with its labels.
    await request(t.baseUrl).get('/health/live').expect(200);
    exposition = (await request(t.baseUrl).get('/metrics').expect(200)).text;
    families = new Map(
      [...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]] as const),
    );
  });
  afterAll(() => t.close());

  /** The family a series name belongs to: histograms expose `_bucket`, `_count`, `_sum`. */
  function family(name: string): string | undefined {
    if (families.has(name)) return name;
    const base = name.replace(/_(bucket|count|sum)$/, '');
    return families.get(base) === 'histogram' ? base : undefined;
  }

  it('finds queries to check', () => {
    expect(queries.length).toBeGreaterThan(20);
    expect(new Set(queries.flatMap((q) => metricNames(q.expr)))).toContain(
      'vector_sync_lag_seconds',
    );
  });

  it('uses only metric names the server exposes', () => {
    const missing = queries.flatMap(({ where, expr }) =>
      metricNames(expr)
        // `up` is Prometheus's own series for every target.
        .filter((name) => name !== 'up' && family(name) === undefined)
        .map((name) => `${where}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('selects on labels those metrics have', () => {
    // Labels added by Prometheus at scrape time, not by the server.
    const targetLabels = new Set(['job', 'instance', 'namespace']);
    const wrong = queries.flatMap(({ where, expr }) =>
      selectorLabels(expr).flatMap(({ metric, labels }) => {
        const name = family(metric);
        if (name === undefined) return []; // reported by the test above
        // A labelled metric shows its labels once it has a series; unobserved ones are skipped.
        const series = [...exposition.matchAll(new RegExp(`^${name}\\w*\\{([^}]*)\\}`, 'gm'))];
        if (series.length === 0) return [];
        const known = new Set(
          series.flatMap((s) => [...s[1].matchAll(/(\w+)="/g)].map((m) => m[1])),
        );
        return labels
          .filter((label) => !targetLabels.has(label) && !known.has(label))
          .map((label) => `${where}: ${metric} has no label ${label}`);
      }),
    );
    expect(wrong).toEqual([]);
  });

  it('excludes probes and scrapes by the route label values the server really uses', () => {
    expect(exposition).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/health\/live"/);
    const ratio = alerts.groups[0].rules.find((r) => r.alert === 'AgentDataHighErrorRatio')!;
    const exclusion = /route!~"([^"]+)"/.exec(ratio.expr)![1];
    for (const route of ['/health/live', '/health/ready', '/metrics'])
      expect(new RegExp(`^(?:${exclusion})$`).test(route)).toBe(true);
    expect(new RegExp(`^(?:${exclusion})$`).test('/documents')).toBe(false);
  });

  it('has a well-formed dashboard: unique panel ids, every query on the chosen data source', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const raw = JSON.parse(
      readFileSync(join(ROOT, 'docker', 'grafana', 'agent-data.json'), 'utf8'),
    ) as { panels: { targets?: { datasource: { uid: string } }[] }[] };
    const sources = raw.panels.flatMap((p) => (p.targets ?? []).map((x) => x.datasource.uid));
    expect(new Set(sources)).toEqual(new Set(['${datasource}']));
  });
});
