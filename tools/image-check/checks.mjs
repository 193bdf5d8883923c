// What each rendered container must do in the image, run with podman as rendered.mjs
// reproduces it: a Job runs to exit 0; the Deployment's server passes its probes, serves REST,
// MCP and /metrics with the release's keys, and stops on SIGTERM after its preStop hook with
// exit 0 within its grace period; the backup CronJob writes a backup file.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { run, tail } from './host.mjs';
import { podmanArgs, portOf } from './rendered.mjs';

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** The container's log, its last lines indented, for a failure's message. */
async function logsOf(name) {
  const logs = await run('podman', ['logs', name], { timeoutMs: 30_000 });
  return tail(logs.stdout + logs.stderr, 25);
}

/**
 * Runs a Job's (or a CronJob's) container once, as `restartPolicy: Never` would, within its
 * activeDeadlineSeconds. Resolves with its exit code, output and time.
 */
export async function runJob(workload, context, containerName) {
  const { args } = podmanArgs(workload, { ...context, containerName });
  const spec =
    workload.kind === 'CronJob' ? workload.object.spec.jobTemplate.spec : workload.object.spec;
  const deadline = (spec.activeDeadlineSeconds ?? 600) * 1000;
  context.containers.add(containerName);
  const done = await run('podman', ['run', ...args], { timeoutMs: deadline });
  await run('podman', ['rm', '--force', containerName]);
  context.containers.delete(containerName);
  if (done.timedOut)
    throw new Error(`still running after activeDeadlineSeconds (${deadline / 1000} s)`);
  return { code: done.code, output: (done.stdout + done.stderr).trim(), ms: done.ms };
}

/**
 * Polls an httpGet probe until it answers 2xx–3xx, within the time the kubelet gives it
 * (initialDelaySeconds + failureThreshold × periodSeconds), each attempt within its
 * timeoutSeconds. It polls more often than the kubelet, to tell the time to ready closely.
 */
async function probe(name, container, spec, label) {
  const port = portOf(container, spec.httpGet.port);
  const url = `http://127.0.0.1:${port}${spec.httpGet.path}`;
  const budgetS =
    (spec.initialDelaySeconds ?? 0) + (spec.failureThreshold ?? 3) * (spec.periodSeconds ?? 10);
  const deadline = Date.now() + budgetS * 1000;
  for (;;) {
    const status = await fetch(url, {
      signal: AbortSignal.timeout((spec.timeoutSeconds ?? 1) * 1000),
    }).then(
      (r) => r.status,
      () => 0,
    );
    if (status >= 200 && status < 400) return;
    const state = await run('podman', ['inspect', name, '--format', '{{.State.Status}}']);
    if (state.stdout.trim() !== 'running') {
      throw new Error(
        `the container stopped before its ${label} probe passed:\n${await logsOf(name)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${label} probe ${spec.httpGet.path} did not pass within ${budgetS} s (last: ${status || 'no answer'}):\n${await logsOf(name)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Whether something accepts connections on the loopback `port`. */
function listening(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts the Deployment's container and waits as the kubelet would: the startup probe, then
 * the readiness probe. Resolves with the base URL, the environment it was given and the time
 * to ready.
 */
export async function startServer(workload, context, containerName) {
  const { args, env } = podmanArgs(workload, { ...context, containerName });
  const { container } = workload;
  const port = portOf(container, container.readinessProbe.httpGet.port);
  if (await listening(port)) {
    throw new Error(`port ${port} of this host is taken, and the server shares the host's network`);
  }
  const started = Date.now();
  context.containers.add(containerName);
  const created = await run('podman', ['run', '--detach', ...args], { timeoutMs: 120_000 });
  if (created.code !== 0) throw new Error(`podman run failed:\n${tail(created.stderr)}`);
  if (container.startupProbe)
    await probe(containerName, container, container.startupProbe, 'startup');
  await probe(containerName, container, container.readinessProbe, 'readiness');
  return { baseUrl: `http://127.0.0.1:${port}`, env, readyMs: Date.now() - started };
}

/**
 * Ends the server as Kubernetes ends a pod: its preStop hook, then SIGTERM, then SIGKILL at
 * the end of terminationGracePeriodSeconds. Resolves with its exit code and the time SIGTERM
 * took.
 */
export async function stopServer(workload, context, containerName) {
  const grace = workload.pod.terminationGracePeriodSeconds ?? 30;
  const started = Date.now();
  const preStop = workload.container.lifecycle?.preStop?.exec?.command;
  if (preStop)
    await run('podman', ['exec', containerName, ...preStop], { timeoutMs: grace * 1000 });
  const left = Math.max(1, grace - Math.floor((Date.now() - started) / 1000));
  const termStarted = Date.now();
  await run('podman', ['stop', '--time', String(left), containerName], {
    timeoutMs: (left + 30) * 1000,
  });
  const termMs = Date.now() - termStarted;
  const code = Number(
    (
      await run('podman', ['inspect', containerName, '--format', '{{.State.ExitCode}}'])
    ).stdout.trim(),
  );
  const logs = code === 0 ? '' : await logsOf(containerName);
  await run('podman', ['rm', '--force', containerName]);
  context.containers.delete(containerName);
  return { code, termMs, logs };
}

/** The first key of API_KEYS granting `profile`. */
export function keyFor(env, profile) {
  for (const entry of (env.API_KEYS ?? '').split(';')) {
    const [, key, profiles = ''] = entry.trim().split(':');
    if (profiles.split(',').includes(profile)) return key;
  }
  throw new Error(`API_KEYS grants no key the ${profile} profile`);
}

async function call(url, { key, method = 'GET', body, headers = {} }) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(key ? { 'X-API-Key': key } : {}),
      ...(body ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, text };
}

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await check();
    if (last === true) return;
    if (Date.now() > deadline)
      throw new Error(`${what} within ${timeoutMs / 1000} s (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * What a client does with the running server, with the keys the release gives: write and
 * read a document (REST, admin key), find it with search (REST) and through MCP's
 * search_knowledge (a key of the internal profile, /mcp), read the OpenAPI document, scrape
 * /metrics. Resolves with a
 * summary line; throws naming the first answer that is not right.
 */
export async function exerciseServer({ baseUrl, env }, { id }) {
  const admin = keyFor(env, 'admin');
  const agent = keyFor(env, 'internal');
  const body = `# Image check\n\nThe zanzibarian lighthouse keeper logs ${id} every night.`;
  const put = await call(`${baseUrl}/documents`, {
    key: admin,
    method: 'POST',
    body: { document_id: `image-check/${id}.md`, body },
  });
  if (put.status !== 201)
    throw new Error(`POST /documents: ${put.status} ${put.text.slice(0, 200)}`);
  const read = await call(`${baseUrl}/documents/image-check/${id}.md`, { key: admin });
  if (read.status !== 200 || !read.text.includes('lighthouse')) {
    throw new Error(`GET /documents/image-check/${id}.md: ${read.status}`);
  }
  const unauthenticated = await call(`${baseUrl}/documents/image-check/${id}.md`, {});
  if (unauthenticated.status !== 401)
    throw new Error(`GET without a key: ${unauthenticated.status}, not 401`);
  await until('GET /search to find the document', async () => {
    const found = await call(`${baseUrl}/search?query=zanzibarian%20lighthouse`, { key: admin });
    return (found.status === 200 && found.text.includes(`image-check/${id}.md`)) || found.status;
  });
  const mcp = await call(`${baseUrl}/mcp`, {
    key: agent,
    method: 'POST',
    headers: { Accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_knowledge', arguments: { query: 'lighthouse keeper' } },
    },
  });
  if (
    mcp.status !== 200 ||
    !mcp.text.includes(`image-check/${id}.md`) ||
    mcp.text.includes('"isError":true')
  ) {
    throw new Error(`MCP tools/call search_knowledge: ${mcp.status} ${mcp.text.slice(0, 200)}`);
  }
  // Generated at start from the same schemas as the validation (without any compiler).
  const openapi = await call(`${baseUrl}/docs-json`, {});
  if (openapi.status !== 200 || !openapi.text.includes('"openapi"')) {
    throw new Error(`GET /docs-json: ${openapi.status}`);
  }
  const metrics = await call(`${baseUrl}/metrics`, {});
  if (metrics.status !== 200 || !metrics.text.includes('http_request_duration_seconds')) {
    throw new Error(`GET /metrics: ${metrics.status}`);
  }
  return 'REST write, read (refused without a key), search; MCP search_knowledge; /docs-json; /metrics scraped';
}

/** Waits until the pipeline has nothing left to embed (GET /admin/vectors/status). */
export async function vectorsSettled({ baseUrl, env }) {
  const admin = keyFor(env, 'admin');
  let status;
  await until('the vector pipeline to settle', async () => {
    const answer = await call(`${baseUrl}/admin/vectors/status`, { key: admin });
    if (answer.status !== 200) return answer.status;
    status = JSON.parse(answer.text);
    const counts = status.counts ?? status;
    return ((counts.pending ?? 0) === 0 && (counts.ready ?? 0) > 0) || JSON.stringify(counts);
  });
  return status;
}

/** The backup files a run left in `dir`: each must be a whole Agent Data backup. */
export function backupFiles(dir) {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.backup.gz'))
    .map((name) => {
      const bytes = readFileSync(join(dir, name));
      const text = gunzipSync(bytes).toString('utf8');
      if (!text.startsWith('AGENT-DATA-BACKUP 1\n') || !text.includes('\nMANIFEST ')) {
        throw new Error(`${name} is not a whole Agent Data backup`);
      }
      return { name, bytes: statSync(join(dir, name)).size };
    });
}

export { seconds };
