#!/usr/bin/env node
// `npm run fuzz:api`: Schemathesis against the built server's own OpenAPI document, as CI runs
// it (docs/development.md, "The API fuzzed").
//
// 1. Installs Schemathesis (the version below, from PyPI) into a virtual environment outside
//    the repository: ${AGENT_DATA_TOOLS:-~/.cache/agent-data}/schemathesis-VERSION, once.
// 2. Starts dist/src/main.js on a free loopback port with a fresh embedded PostgreSQL (a
//    temporary DATA_DIR) and an admin API key, and writes two documents so that reads have
//    something to find.
// 3. Runs `st run /docs-json` with tools/api-fuzz/schemathesis.toml: every check but the two
//    it names (and why), a fixed seed and a fixed number of examples per operation, so a
//    failure is found again by the same command; the stateful phase follows the document's
//    links (create → read → update → delete). Exits with Schemathesis's status.
//
// `FUZZ_SEED=N` and `FUZZ_EXAMPLES=N` change the seed and the examples for a longer run.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCHEMATHESIS = '4.32.5';
const KEY = 'api-fuzz-key-0123456789abcdef0123';
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const tools = process.env.AGENT_DATA_TOOLS ?? join(homedir(), '.cache', 'agent-data');
const venv = join(tools, `schemathesis-${SCHEMATHESIS}`);
const st = join(venv, 'bin', 'st');

const SEED = [
  {
    document_id: 'knowledge/welcome.md',
    body: '# Welcome\n\nThis knowledge base holds the team notes: guides, reports and decisions.',
    tags: ['intro'],
  },
  {
    document_id: 'knowledge/guides/setup.md',
    body: '# Setup\n\nRun `npm install && npm start`; the server listens on port 8080.',
  },
];

function log(line) {
  process.stdout.write(`${line}\n`);
}

/** Schemathesis in a virtual environment of its own, installed on first use. */
function installSchemathesis() {
  if (existsSync(st)) return;
  log(`installing Schemathesis ${SCHEMATHESIS} into ${venv} ...`);
  mkdirSync(tools, { recursive: true });
  const python = process.env.PYTHON ?? 'python3';
  const steps = [
    [python, ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS}`]],
  ];
  for (const [command, args] of steps) {
    const done = spawnSync(command, args, { stdio: 'inherit' });
    if (done.status !== 0) {
      rmSync(venv, { recursive: true, force: true });
      throw new Error(
        `could not install Schemathesis (${command} ${args.join(' ')} failed): it needs Python 3.10+ and PyPI`,
      );
    }
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'agent-data-fuzz-'));
  // As root the embedded PostgreSQL runs as the postgres user, who must reach this directory.
  chmodSync(dataDir, 0o755);
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      API_KEYS: `fuzz:${KEY}:admin`,
      // Fuzzing writes hundreds of documents a second: the limit would answer 429s only.
      RATE_LIMIT_ADMIN_WRITES: 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`the server exited (${child.exitCode}): ${stderr}`);
    }
    try {
      if ((await fetch(`${baseUrl}/health/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server was not ready within 90 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  for (const document of SEED) {
    const response = await fetch(`${baseUrl}/documents`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY },
      body: JSON.stringify(document),
    });
    if (!response.ok) throw new Error(`seeding ${document.document_id}: HTTP ${response.status}`);
  }
  return {
    baseUrl,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function main() {
  if (!existsSync(join(root, 'dist', 'src', 'main.js'))) {
    throw new Error('dist/src/main.js is missing: run `npm run build` first');
  }
  installSchemathesis();
  const server = await startServer();
  let status;
  try {
    const args = [
      '--config-file',
      join(here, 'schemathesis.toml'),
      'run',
      `${server.baseUrl}/docs-json`,
      '--url',
      server.baseUrl,
      '--header',
      `X-API-Key: ${KEY}`,
      ...(process.env.FUZZ_SEED ? ['--seed', process.env.FUZZ_SEED] : []),
      ...(process.env.FUZZ_EXAMPLES ? ['--max-examples', process.env.FUZZ_EXAMPLES] : []),
    ];
    log(`st ${args.join(' ').replace(KEY, '***')}`);
    status = await new Promise((resolve) => {
      const run = spawn(st, args, { stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } });
      run.on('exit', (code) => resolve(code ?? 1));
    });
  } finally {
    await server.stop();
  }
  if (status !== 0) {
    log(`Schemathesis found failures (exit ${status}); the server's stderr:\n${server.stderr()}`);
  }
  process.exit(status);
}

main().catch((error) => {
  process.stderr.write(`fuzz:api: ${error.message}\n`);
  process.exit(1);
});
