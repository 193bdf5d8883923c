// The built server (dist/src/main.js) started for a tool run: on a free loopback port with a
// fresh embedded PostgreSQL (a temporary DATA_DIR), ready once /health/ready answers, seeded
// with a few documents through the admin API. The MCP checks (tools/mcp-check/run.mjs) and
// the API fuzzing (tools/api-fuzz/run.mjs) both run against one.
import { getRandomPort } from 'get-port-please';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts the server with `env` over its defaults and writes `seed` (documents, with the
 * `headers` of an admin request). Resolves with its base URL, its stderr so far and `stop`,
 * which ends it with SIGTERM and removes its DATA_DIR.
 */
export async function startBuiltServer({ name, env = {}, seed = [], headers = {} }) {
  const port = await getRandomPort('127.0.0.1');
  const dataDir = mkdtempSync(join(tmpdir(), `agent-data-${name}-`));
  // As root the embedded PostgreSQL runs as the postgres user, who must reach this directory.
  chmodSync(dataDir, 0o755);
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
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
  for (const document of seed) {
    const response = await fetch(`${baseUrl}/documents`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(document),
    });
    if (!response.ok) throw new Error(`seeding ${document.document_id}: HTTP ${response.status}`);
  }
  return {
    baseUrl,
    dataDir,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
