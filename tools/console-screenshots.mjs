#!/usr/bin/env node
// `npm run docs:screenshots`: the console's main pages as docs/images/console-*.png. Starts
// the built server on a temporary embedded PostgreSQL, writes a few documents through the
// REST API (and edits one, so that it has a history), imports a small Obsidian vault with
// `agent-data import` (for the page of a note with its backlinks and neighbourhood), and
// photographs each page in Chromium (CHROMIUM_PATH or `chromium` on the PATH).
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'screenshots-key-0123456789abcdef';
const executablePath =
  process.env.CHROMIUM_PATH ?? execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();

const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const dataDir = mkdtempSync(join(tmpdir(), 'agent-data-screenshots-'));
chmodSync(dataDir, 0o755);
const child = spawn(process.execPath, [join(root, 'bin', 'agent-data.js'), 'serve'], {
  env: {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    API_KEYS: `ops:${KEY}:admin`,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
const api = (path, method = 'GET', body) =>
  fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health/ready`)).ok) break;
    } catch {
      // not yet
    }
    if (i > 240) throw new Error('the server did not start');
    await new Promise((r) => setTimeout(r, 250));
  }
  const docs = [
    [
      'runbooks/backups.md',
      'Backups',
      ['ops'],
      '# Backups\n\nNightly at 02:00 UTC; kept 30 days.\n\n## Restore\n\n1. Stop the writers.\n2. `pg_restore -d kb latest.dump`\n3. Check `/health/ready`.\n',
    ],
    [
      'runbooks/leases.md',
      'Leases',
      ['ops'],
      '# Leases\n\n`ERR_LEASE_LOST_42` means a worker lost its lease; see [backups](backups.md).\n',
    ],
    [
      'guides/onboarding.md',
      'Onboarding',
      ['people'],
      '# Onboarding\n\n| Day | What |\n|---|---|\n| 1 | Accounts |\n| 2 | First deploy |\n',
    ],
    [
      'guides/style.md',
      'Writing style',
      ['docs'],
      '# Writing style\n\nShort sentences. Plain words.\n',
    ],
    [
      'decisions/0007-postgres.md',
      'Use PostgreSQL',
      ['adr'],
      '# Use PostgreSQL\n\nOne database for documents and vectors.\n',
    ],
  ];
  for (const [document_id, title, tags, body] of docs) {
    await api('/documents', 'POST', { document_id, title, tags, body });
  }
  await api('/documents/runbooks/backups.md', 'PUT', {
    body: '# Backups\n\nNightly at 03:00 UTC; kept 35 days.\n\n## Restore\n\n1. Stop the writers.\n2. `pg_restore -d kb latest.dump`\n3. Check `/health/ready` and the pipeline page.\n',
  });
  // An Obsidian vault: notes linking by [[name]], by path, with a heading and a label.
  const vault = join(dataDir, 'vault');
  const notes = {
    'Home.md': '# Home\n\nStart at [[Database failover]] or [[Backup runbook|the backups]].\n',
    'runbooks/Database failover.md':
      '# Database failover\n\nPromote the replica of [[PostgreSQL]], then restart [[API]] and flush [[Redis]].\nIf the primary lost data, follow [[Backup runbook#Restore]].\n',
    'runbooks/Backup runbook.md':
      '# Backup runbook\n\nNightly dumps of [[PostgreSQL]]. Restoring is step 3 of [[Database failover]].\n',
    'services/PostgreSQL.md':
      '# PostgreSQL\n\nThe primary database. Runbooks: [[Database failover]].\n',
    'services/API.md': '# API\n\nServes the data of [[PostgreSQL]] through [[Redis]].\n',
    'services/Redis.md': '# Redis\n\nThe cache in front of [[PostgreSQL]].\n',
    'decisions/Upgrade PostgreSQL to 17.md':
      '# Upgrade PostgreSQL to 17\n\nWe moved [[services/PostgreSQL]] to 17; the [[Old cluster]] is gone.\n',
  };
  for (const [path, text] of Object.entries(notes)) {
    mkdirSync(dirname(join(vault, path)), { recursive: true });
    writeFileSync(join(vault, path), text);
  }
  execFileSync(
    process.execPath,
    [join(root, 'bin', 'agent-data.js'), 'import', vault, '--prefix', 'notes'],
    {
      env: { ...process.env, AGENT_DATA_URL: base, AGENT_DATA_API_KEY: KEY },
      stdio: 'ignore',
    },
  );
  await new Promise((r) => setTimeout(r, 2000));

  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
  await page.goto(`${base}/console/`);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const shots = [
    [
      'browse',
      '#/browse/runbooks',
      () => page.getByRole('cell', { name: 'runbooks/leases.md' }).waitFor(),
    ],
    ['document', '#/doc/runbooks/backups.md', () => page.locator('.markdown h2').waitFor()],
    [
      'search',
      '#/search?q=restore%20the%20backup&mode=hybrid',
      () => page.locator('.results li').first().waitFor(),
    ],
    [
      'history',
      '#/history/runbooks/backups.md',
      async () => {
        await page.getByLabel('Compare from revision 1').check();
        await page.getByLabel('Compare to revision 2').check();
        await page.locator('figure.diff .added').first().waitFor();
      },
    ],
    ['changes', '#/changes', () => page.locator('tbody tr').first().waitFor()],
    [
      'pipeline',
      '#/pipeline',
      () => page.getByRole('heading', { name: 'Embedder and store' }).waitFor(),
    ],
  ];
  for (const [name, hash, ready] of shots) {
    await page.goto(`${base}/console/${hash}`);
    await ready();
    await page.screenshot({ path: join(root, 'docs', 'images', `console-${name}.png`) });
    process.stdout.write(`docs/images/console-${name}.png\n`);
  }
  // A note's links: its backlinks with their passages, its broken links, its neighbourhood.
  await page.setViewportSize({ width: 1200, height: 1180 });
  await page.goto(`${base}/console/#/doc/notes/services/PostgreSQL.md`);
  await page.getByRole('group', { name: /Documents within two links/ }).waitFor();
  await page.locator('#backlinks-title').scrollIntoViewIfNeeded();
  await page.evaluate(
    'window.scrollTo(0, document.querySelector("#backlinks-title").offsetTop - 16)',
  );
  await page.screenshot({ path: join(root, 'docs', 'images', 'console-links.png') });
  process.stdout.write('docs/images/console-links.png\n');
  await page.goto(`${base}/console/#/broken/notes`);
  await page.getByRole('status').waitFor();
  await page.setViewportSize({ width: 1200, height: 420 });
  await page.screenshot({ path: join(root, 'docs', 'images', 'console-broken-links.png') });
  process.stdout.write('docs/images/console-broken-links.png\n');
  await browser.close();
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
