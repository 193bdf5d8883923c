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
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBuiltServer } from '../built-server.mjs';

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

function startServer() {
  return startBuiltServer({
    name: 'fuzz',
    env: {
      API_KEYS: `fuzz:${KEY}:admin`,
      // Fuzzing writes hundreds of documents a second: the limit would answer 429s only.
      RATE_LIMIT_ADMIN_WRITES: 'off',
    },
    seed: SEED,
    headers: { 'X-API-Key': KEY },
  });
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
