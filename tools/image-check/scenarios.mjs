// The value sets the chart is run with: its defaults (with the credentials it requires and
// the backup CronJob on), and the production example of docs/operations.md as written there —
// its values file and the Secret its `kubectl create secret` makes — with only the image,
// the Qdrant URL and the embeddings server pointed at this host. Each set's workloads run in
// the order a `helm install` and a day of service give them: the migration Job (twice: the
// second finds nothing to do), the server, the backup CronJob against it, then the server's
// stop.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as checks from './checks.mjs';
import { run } from './host.mjs';
import { portOf, render, serviceHosts, workloads, dataSources } from './rendered.mjs';
import { qdrantBinary, startEmbeddings, startPostgres, startQdrant } from './services.mjs';

const RELEASE = 'agent-data';
const NAMESPACE = 'agent-data';
const key = () => randomBytes(24).toString('hex');

/** The production example's values file and Secret, read from docs/operations.md. */
export function productionExample(root) {
  const page = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
  const blocks = (language) =>
    [...page.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
  const values = blocks('yaml').find((block) => block.startsWith('# values-prod.yaml\n'));
  const command = blocks('sh').find((block) => block.includes('create secret generic'));
  if (!values || !command) {
    throw new Error(
      'docs/operations.md has no values-prod.yaml example or no `kubectl create secret` beside it',
    );
  }
  const secretName = /create secret generic (\S+)/.exec(command)[1];
  const literals = Object.fromEntries(
    [...command.matchAll(/--from-literal=(\w+)='([^']*)'/g)].map((m) => [m[1], m[2]]),
  );
  return { values, secretName, literals };
}

/**
 * The scenarios, each `{ title, run(report) }`; `run` reports one verdict per container and
 * resolves with the number that failed. PostgreSQL, Qdrant and the embeddings server start
 * once, with the first scenario that needs them.
 */
export function scenarios(context) {
  const { root, tag, scratch, started } = context;
  const chart = join(root, 'docker', 'helm', 'agent-data');
  const helm = join(root, 'node_modules', '.bin', 'helm');
  const [repository, imageTag] = [
    tag.slice(0, tag.lastIndexOf(':')),
    tag.slice(tag.lastIndexOf(':') + 1),
  ];
  const image = [
    '--set',
    `image.repository=${repository}`,
    '--set-string',
    `image.tag=${imageTag}`,
  ];
  let postgres;
  const database = async (name) => {
    if (!postgres) {
      postgres = await startPostgres();
      started.stops.push(() => postgres.stop());
    }
    return postgres.database(name);
  };

  const defaults = {
    title: 'default values (with the credentials they require, and backup.enabled)',
    async run(report) {
      const admin = key();
      const values = [
        ...image,
        '--set-string',
        `secrets.databaseUrl=${await database('chart_defaults')}`,
        '--set-string',
        `secrets.apiKeys=ops:${admin}:admin;agent:${key()}:internal`,
        '--set',
        'backup.enabled=true',
        '--set-string',
        `secrets.backupApiKey=${admin}`,
      ];
      return install({ values, external: {}, report });
    },
  };

  const production = {
    title: 'production example of docs/operations.md (values-prod.yaml and its Secret)',
    async run(report) {
      const example = productionExample(root);
      const file = join(scratch, 'values-prod.yaml');
      writeFileSync(file, example.values);
      const qdrantKey = key();
      const binary = qdrantBinary(root);
      const qdrant = binary.path ? await startQdrant(binary.path, qdrantKey) : undefined;
      if (qdrant) started.stops.push(() => qdrant.stop());
      const embeddings = await startEmbeddings();
      started.stops.push(() => embeddings.stop());
      // The Secret as its command makes it, each placeholder given a real value.
      const filled = {
        DATABASE_URL: await database('chart_production'),
        API_KEYS: (literal) => literal.replace(/[A-Z_]+_KEY/g, () => key()),
        OPENAI_API_KEY: `sk-${key()}`,
        QDRANT_API_KEY: qdrantKey,
      };
      const secret = {};
      for (const [name, literal] of Object.entries(example.literals)) {
        if (!(name in filled))
          throw new Error(`the docs' Secret has ${name}, which this check cannot fill`);
        secret[name] = typeof filled[name] === 'function' ? filled[name](literal) : filled[name];
      }
      const values = [
        '-f',
        file,
        ...image,
        '--set-string',
        `config.OPENAI_BASE_URL=${embeddings.url}`,
      ];
      values.push('--set-string', `config.QDRANT_URL=${qdrant?.url ?? 'http://127.0.0.1:9'}`);
      if (!qdrant) {
        report({
          ok: true,
          text: `Qdrant: not run (${binary.missing}); the server must start without it`,
        });
      }
      return install({
        values,
        external: { [example.secretName]: secret },
        report,
        afterExercise: async (server, objects) => {
          await checks.vectorsSettled(server);
          if (!qdrant) return `embeddings asked ${embeddings.state.requests} times`;
          const collection =
            objects.find((o) => o.kind === 'ConfigMap')?.data?.QDRANT_COLLECTION ?? 'kb_documents';
          const points = await qdrant.points(collection);
          if (!(points > 0)) throw new Error(`Qdrant collection ${collection}: ${points} points`);
          return `vectors in Qdrant (${collection}: ${points} points, API key from the Secret)`;
        },
      });
    },
  };

  /** Renders `values` and runs every workload; resolves with the count of failed verdicts. */
  async function install({ values, external, report, afterExercise }) {
    const objects = render(helm, chart, RELEASE, NAMESPACE, values);
    const sources = dataSources(objects, external);
    const all = workloads(objects);
    const claimsDir = mkdtempSync(join(scratch, 'claims-'));
    const claims = Object.fromEntries(
      all
        .flatMap((w) => w.pod.volumes ?? [])
        .filter((v) => v.persistentVolumeClaim)
        .map((v) => [v.persistentVolumeClaim.claimName, mkdtempSync(join(claimsDir, 'claim-'))]),
    );
    const runContext = {
      sources,
      scratch,
      claims,
      hosts: serviceHosts(objects, NAMESPACE),
      containers: started.containers,
    };
    checkServicePorts(objects, all);
    let failed = 0;
    const verdict = async (label, step) => {
      try {
        report({ ok: true, text: `${label}: ${await step()}` });
        return true;
      } catch (error) {
        failed++;
        report({ ok: false, text: `${label}: ${error.message}` });
        return false;
      }
    };
    const name = (w) =>
      `agent-data-check-${w.kind.toLowerCase()}-${randomBytes(3).toString('hex')}`;
    const jobs = all.filter((w) => w.kind === 'Job');
    const servers = all.filter((w) => w.kind === 'Deployment');
    const cronJobs = all.filter((w) => w.kind === 'CronJob');
    let migrated = true;
    for (const job of jobs) {
      migrated &&= await verdict(`Job ${job.name}`, async () => {
        const first = await checks.runJob(job, runContext, name(job));
        if (first.code !== 0) throw new Error(`exit ${first.code}:\n${first.output}`);
        const second = await checks.runJob(job, runContext, name(job));
        if (second.code !== 0 || !second.output.includes('schema is up to date')) {
          throw new Error(`run again: exit ${second.code}: ${second.output}`);
        }
        const applied = /applied (.*)/.exec(first.output)?.[1]?.split(', ').length ?? 0;
        return `exit 0 in ${checks.seconds(first.ms)}, ${applied} migrations applied; run again: schema is up to date`;
      });
    }
    if (!migrated) return { failed };
    for (const server of servers) {
      const containerName = name(server);
      let running;
      await verdict(`Deployment ${server.name}`, async () => {
        running = await checks.startServer(server, runContext, containerName);
        const exercised = await checks.exerciseServer(running, {
          id: randomBytes(4).toString('hex'),
        });
        const more = afterExercise ? `; ${await afterExercise(running, objects)}` : '';
        return `ready in ${checks.seconds(running.readyMs)} (startup and readiness probes); ${exercised}${more}`;
      });
      if (running) {
        for (const cronJob of cronJobs) {
          await verdict(`CronJob ${cronJob.name}`, async () => {
            const done = await checks.runJob(cronJob, runContext, name(cronJob));
            if (done.code !== 0) throw new Error(`exit ${done.code}:\n${done.output}`);
            const files = Object.values(claims).flatMap((dir) => checks.backupFiles(dir));
            if (files.length !== 1) throw new Error(`${files.length} backup files written, not 1`);
            return `exit 0 in ${checks.seconds(done.ms)}, ${files[0].name} (${Math.ceil(files[0].bytes / 1024)} KB, manifest checked)`;
          });
        }
      }
      if (!running) {
        await run('podman', ['rm', '--force', containerName]);
        started.containers.delete(containerName);
      } else {
        await verdict(`Deployment ${server.name} stopped`, async () => {
          const stopped = await checks.stopServer(server, runContext, containerName);
          if (stopped.code !== 0)
            throw new Error(`exit ${stopped.code} after SIGTERM:\n${stopped.logs}`);
          return `preStop hook, then SIGTERM: exit 0 in ${checks.seconds(stopped.termMs)}`;
        });
      }
    }
    return { failed };
  }

  return [defaults, production];
}

/** On one host the Service's name leads to the container's own port: they must be equal. */
function checkServicePorts(objects, all) {
  for (const service of objects.filter((o) => o.kind === 'Service')) {
    const server = all.find((w) => w.kind === 'Deployment');
    for (const port of service.spec.ports) {
      const target = portOf(server.container, port.targetPort ?? port.port);
      if (target !== port.port) {
        throw new Error(
          `Service ${service.metadata.name} port ${port.port} → ${target}: on one host they must be equal`,
        );
      }
    }
  }
}
