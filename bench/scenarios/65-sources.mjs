// Sources (src/sources/), on a PostgreSQL and a server of their own, declared over `POST
// /sources`: how fast a first sync writes, and how little a sync with nothing changed does.
//
// - A folder of 10 000 markdown files of 2–6 KB (those of 15-bulk): the first sync's
//   documents/s against `agent-data import` of the same files into another folder of the
//   knowledge base in the same run (target ≥ 0.8 ×); then a sync with nothing changed: its
//   run's duration (started_at to finished_at, target < 2 s), and nothing written (no
//   document created, updated or deleted, no revision or audit entry).
// - A bare git repository of the same files read by its file:// URL: the first sync's
//   documents/s against the import (≥ 0.8 ×); then a sync with the head unmoved: one git
//   command (`ls-remote`: a `git` on the server's PATH logs every command), under 2 s, nothing
//   written.
// - A site of 200 pages with ETags on loopback (node:http in this process): the first crawl,
//   then a sync in which every page is asked for conditionally (If-None-Match on every page
//   request) and nothing written. The web connector waits 250 ms between two requests to a
//   host, so each crawl of 200 pages takes some 50 s: that is its politeness, not a cost.
//
// Each measured phase starts once the vector pipeline has embedded the writes before it.
// `BENCH_DOCS=0 BENCH_ONLY=65 npm run bench` runs it alone; BENCH_SOURCES_FILES changes the
// number of files.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import pg from 'pg';
import { round, startServer, until } from '../lib.mjs';
import { OwnPostgres } from '../own-postgres.mjs';
import { timedImport, writeBulkFiles } from './15-bulk.mjs';

const run = promisify(execFile);
const FILES = Number(process.env.BENCH_SOURCES_FILES ?? 10_000);
const PAGES = 200;
const KEY = 'sources-bench-key-0123456789abcdef';
const HEADERS = { 'X-API-Key': KEY };
const TARGET_RATIO = 0.8;
const TARGET_RESYNC_MS = 2000;
/** A file modified this recently is read again by the next sync (folder-connector's UNSETTLED_MS). */
const UNSETTLED_MS = 3000;

export default async function sources({ log }) {
  log(`sources: load average ${loadavg().map(round).join(' ')} at the start`);
  const work = mkdtempSync(join(tmpdir(), 'agent-data-bench-sources-'));
  chmodSync(work, 0o755);
  const files = join(work, 'files');
  writeBulkFiles(files, FILES);
  mkdirSync(join(work, 'data'));
  const writtenAt = Date.now();
  const repository = await bareRepositoryOf(work, files);
  const git = await loggedGit(work);
  const site = await startSite(PAGES);
  const cluster = await OwnPostgres.create();
  const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
  const server = await startServer({
    databaseUrl: cluster.url,
    env: {
      API_KEYS: `sources:${KEY}:admin`,
      DATA_DIR: join(work, 'data'),
      PATH: `${git.dir}:${process.env.PATH}`,
      RATE_LIMIT_ADMIN_WRITES: 'off',
      INGEST_ALLOW_HTTP: 'true',
      INGEST_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
    },
  });
  const api = new Api(server.baseUrl, pool);
  const rows = [];
  const targets = [];
  try {
    const imported = await timedImport(files, 'imported', server.baseUrl, KEY);
    const importRate = FILES / imported.seconds;
    log(
      `sources: agent-data import of ${FILES} files in ${round(imported.seconds)} s: ${round(importRate)} documents/s (${imported.summary})`,
    );
    rows.push({
      scenario: `sources: agent-data import of ${FILES} files (the baseline)`,
      rps: round(importRate),
      compared: `${round(imported.seconds)} s; ${imported.summary}`,
    });
    // A file written within UNSETTLED_MS of a listing is read again at the next one.
    await sleep(writtenAt + UNSETTLED_MS + 500 - Date.now());

    for (const declaration of [
      { id: 'folder', kind: 'folder', path: files, mount: 'folder' },
      { id: 'git', kind: 'git', url: repository, ref: 'main', mount: 'git' },
    ]) {
      const { id } = declaration;
      await api.settle(log);
      const first = await api.firstSync(declaration);
      const rate = first.counts.created / first.seconds;
      const ratio = rate / importRate;
      log(
        `sources: ${id}: first sync ${JSON.stringify(first.counts)} in ${round(first.seconds)} s (the run ${round(first.runMs / 1000)} s): ${round(rate)} documents/s, ${round(ratio)} × import`,
      );
      const firstPass = ratio >= TARGET_RATIO && first.counts.created === FILES;
      targets.push([`${id}: first sync ÷ import`, `≥ ${TARGET_RATIO} ×`, round(ratio), firstPass]);
      rows.push({
        scenario: `sources: ${id}: first sync of ${FILES} files`,
        rps: round(rate),
        compared: `${round(ratio)} × import (target ≥ ${TARGET_RATIO} ×): ${verdict(firstPass)}; run ${round(first.runMs)} ms, ${JSON.stringify(first.counts)}`,
      });

      await api.settle(log);
      const commandsBefore = git.commands().length;
      const again = await api.resync(id);
      const commands = git.commands().slice(commandsBefore);
      const gitPass =
        id !== 'git' || (commands.length === 1 && commands[0].startsWith('ls-remote '));
      const quiet = again.wroteNothing && gitPass;
      log(
        `sources: ${id}: sync with nothing changed in ${again.runMs} ms: ${JSON.stringify(again.counts)}; ${again.wroteNothing ? 'nothing written' : `WRITTEN: ${again.written}`}${id === 'git' ? `; git commands: ${commands.join(' | ')}` : ''}`,
      );
      targets.push([
        `${id}: sync with nothing changed`,
        `< ${TARGET_RESYNC_MS} ms`,
        `${again.runMs} ms`,
        again.runMs < TARGET_RESYNC_MS,
      ]);
      targets.push([
        `${id}: ... writes nothing${id === 'git' ? ', one ls-remote' : ''}`,
        'nothing',
        id === 'git' ? `${again.written}; ${commands.length} git command(s)` : again.written,
        quiet,
      ]);
      rows.push({
        scenario: `sources: ${id}: sync with nothing changed`,
        max: again.runMs,
        target_max_ms: TARGET_RESYNC_MS,
        compared: `run ${again.runMs} ms (target < ${TARGET_RESYNC_MS}): ${verdict(again.runMs < TARGET_RESYNC_MS)}; ${again.written}${id === 'git' ? `; git: ${commands.join(' | ')}` : ''}: ${verdict(quiet)}`,
      });
    }

    await api.settle(log);
    const crawl = await api.firstSync(
      { id: 'web', kind: 'web', url: `${site.url}/site/`, mount: 'web' },
      5 * 60_000,
    );
    log(
      `sources: web: first crawl ${JSON.stringify(crawl.counts)} in ${round(crawl.seconds)} s (${round(crawl.counts.created / crawl.seconds)} pages/s, paced at 250 ms a request)`,
    );
    rows.push({
      scenario: `sources: web: first crawl of ${PAGES} pages`,
      rps: round(crawl.counts.created / crawl.seconds),
      compared: `${round(crawl.seconds)} s, paced; ${JSON.stringify(crawl.counts)}`,
    });
    await api.settle(log);
    site.hits.length = 0;
    const recrawl = await api.resync('web', 5 * 60_000);
    const pageHits = site.hits.filter((hit) => site.pages.has(hit.path));
    const conditional = pageHits.filter((hit) => hit.conditional).length;
    const share = pageHits.length === 0 ? 0 : conditional / pageHits.length;
    const others = site.hits.filter((hit) => !site.pages.has(hit.path)).map((hit) => hit.path);
    const webPass = share === 1 && pageHits.length === PAGES && recrawl.wroteNothing;
    log(
      `sources: web: sync with nothing changed in ${round(recrawl.runMs / 1000)} s: ${conditional} of ${pageHits.length} page requests conditional, ${pageHits.filter((hit) => hit.status === 304).length} answered 304; other requests: ${others.join(' ')}; ${recrawl.written}`,
    );
    targets.push([
      'web: sync with nothing changed, conditional requests',
      '1.0, nothing written',
      `${round(share)} (${conditional}/${pageHits.length}); ${recrawl.written}`,
      webPass,
    ]);
    rows.push({
      scenario: `sources: web: sync of ${PAGES} unchanged pages`,
      max: recrawl.runMs,
      compared: `conditional ${conditional}/${pageHits.length} = ${round(share)} (target 1.0); ${recrawl.written}: ${verdict(webPass)}; ${round(recrawl.runMs / 1000)} s, paced`,
    });
  } finally {
    await server.stop();
    await pool.end();
    await cluster.destroy();
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
  printTargets(targets, log);
  log(`sources: load average ${loadavg().map(round).join(' ')} at the end`);
  return rows;
}

/** The server's routes and database, as the scenario uses them. */
class Api {
  constructor(baseUrl, pool) {
    this.baseUrl = baseUrl;
    this.pool = pool;
  }

  async call(method, path, body) {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...HEADERS, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }

  /** Declares a source and waits for its first run: the time from the declaration to its end. */
  async firstSync(declaration, timeoutMs = 10 * 60_000) {
    const started = performance.now();
    await this.call('POST', '/sources', declaration);
    let ended;
    await until(
      async () => {
        // The runs rather than the source: its view counts every source's documents.
        const [last] = (await this.call('GET', `/sources/${declaration.id}/runs?limit=1`)).runs;
        if (last === undefined || ['queued', 'running'].includes(last.status)) return false;
        ended = last;
        return true;
      },
      timeoutMs,
      { what: `the first run of ${declaration.id}`, everyMs: 50 },
    );
    const seconds = (performance.now() - started) / 1000;
    if (ended.status !== 'succeeded') {
      throw new Error(`the first run of ${declaration.id}: ${ended.status}: ${ended.message}`);
    }
    return { seconds, runMs: durationOf(ended), counts: ended.counts };
  }

  /** Asks for a sync once the source is idle: its run's duration, and what it wrote. */
  async resync(id, timeoutMs = 60_000) {
    await until(async () => (await this.call('GET', `/sources/${id}`)).state === 'idle', 60_000, {
      what: `${id} to be idle`,
    });
    const before = await this.written(id);
    const asked = await this.call('POST', `/sources/${id}/sync`);
    let ended;
    await until(
      async () => {
        const { runs } = await this.call('GET', `/sources/${id}/runs?limit=1`);
        ended = runs.find((r) => r.id === asked.id && !['queued', 'running'].includes(r.status));
        return ended !== undefined;
      },
      timeoutMs,
      { what: `run ${asked.id} of ${id}`, everyMs: 50 },
    );
    const after = await this.written(id);
    const { created, updated, deleted, moved } = ended.counts;
    const changes = [];
    if (created + updated + deleted + moved > 0) changes.push(JSON.stringify(ended.counts));
    if (after.digest !== before.digest) changes.push('revisions changed');
    if (after.audit !== before.audit) changes.push(`${after.audit - before.audit} audit entries`);
    if (ended.status !== 'succeeded') changes.push(`${ended.status}: ${ended.message}`);
    return {
      runMs: durationOf(ended),
      counts: ended.counts,
      wroteNothing: changes.length === 0,
      written:
        changes.length === 0
          ? `nothing written (${after.documents} documents, revisions and audit unchanged)`
          : changes.join('; '),
    };
  }

  /** The documents under a mount, their revisions (a digest) and their audit entries. */
  async written(mount) {
    const prefix = `${mount}/%`;
    const [documents] = (
      await this.pool.query(
        `SELECT count(*)::int AS n,
                md5(string_agg(document_id || ':' || revision || ':' || updated_at,
                               ',' ORDER BY document_id)) AS digest
           FROM kb_documents WHERE document_id LIKE $1`,
        [prefix],
      )
    ).rows;
    const [audit] = (
      await this.pool.query(`SELECT count(*)::int AS n FROM kb_audit WHERE document_id LIKE $1`, [
        prefix,
      ])
    ).rows;
    return { documents: documents.n, digest: documents.digest, audit: audit.n };
  }

  /** Waits until the vector pipeline has embedded every write so far. */
  async settle(log) {
    const started = performance.now();
    await until(
      async () => {
        const status = await this.call('GET', '/admin/vectors/status');
        return (status.counts?.pending ?? 0) === 0 && (status.leased ?? 0) === 0;
      },
      30 * 60_000,
      { what: 'the vector pipeline to catch up', everyMs: 250 },
    );
    log(`sources: the pipeline caught up in ${round((performance.now() - started) / 1000)} s`);
  }
}

/** A run's duration from its record, in ms. */
function durationOf(run) {
  return Date.parse(run.finished_at) - Date.parse(run.started_at);
}

/** A bare repository (`file://` URL) whose branch `main` holds `files` in one commit. */
async function bareRepositoryOf(work, files) {
  const bare = join(work, 'origin.git');
  const env = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  };
  const git = (...args) => run('git', args, { env, maxBuffer: 64 * 1024 * 1024 });
  await git('init', '--quiet', '--bare', '--initial-branch=main', bare);
  await git(`--git-dir=${bare}`, `--work-tree=${files}`, 'add', '--all');
  await git(`--git-dir=${bare}`, `--work-tree=${files}`, 'commit', '--quiet', '-m', 'files');
  return `file://${bare}`;
}

/**
 * A `git` first on the server's PATH that logs each command's arguments before running the
 * real one: which commands a run started (the transport's own `git-upload-pack` is not one).
 */
async function loggedGit(work) {
  const dir = join(work, 'bin');
  const file = join(work, 'git-commands.log');
  const real = (await run('sh', ['-c', 'command -v git'])).stdout.trim();
  mkdirSync(dir);
  writeFileSync(file, '');
  writeFileSync(
    join(dir, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${file}'\nexec '${real}' "$@"\n`,
    { mode: 0o755 },
  );
  return {
    dir,
    commands: () => readFileSync(file, 'utf8').split('\n').filter(Boolean),
  };
}

/**
 * `count` pages under /site/ on loopback, each with an ETag and answering 304 to a request
 * that names it: /site/ links to the others. Every request is recorded (path, conditional,
 * status); robots.txt and the rest answer 404.
 */
async function startSite(count) {
  const pages = new Map();
  const paths = Array.from(
    { length: count - 1 },
    (_, i) => `/site/p${String(i + 1).padStart(3, '0')}`,
  );
  const page = (title, main) =>
    `<!doctype html><html><head><title>${title}</title></head><body><main>${main}</main></body></html>`;
  pages.set(
    '/site/',
    page(
      'Site',
      `<h1>Site</h1><ul>${paths.map((p) => `<li><a href="${p}">${p}</a></li>`).join('')}</ul>`,
    ),
  );
  paths.forEach((path, i) => {
    const text = Array.from(
      { length: 40 },
      (_, k) => `Sentence ${k} of page ${i + 1} about sources.`,
    ).join(' ');
    pages.set(
      path,
      page(`Page ${i + 1}`, `<h1>Page ${i + 1}</h1><p>${text}</p><a href="/site/">Home</a>`),
    );
  });
  const hits = [];
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const body = pages.get(path);
    const etag = `"${path.length}-${body?.length}"`;
    const conditional = request.headers['if-none-match'] !== undefined;
    let status = 404;
    if (body === undefined) response.writeHead(404).end('not found');
    else if (request.headers['if-none-match'] === etag) response.writeHead((status = 304)).end();
    else {
      status = 200;
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ETag: etag }).end(body);
    }
    hits.push({ path, conditional, status });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    pages,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

function printTargets(targets, log) {
  const header = ['target', 'goal', 'measured', ''];
  const lines = targets.map(([name, goal, measured, pass]) => [
    name,
    goal,
    String(measured),
    verdict(pass),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  for (const line of [header, ...lines]) {
    log(`sources: ${line.map((cell, i) => cell.padEnd(widths[i])).join('  ')}`);
  }
}

function verdict(pass) {
  return pass ? 'PASS' : 'MISS';
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
