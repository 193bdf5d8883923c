import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { TestRepository } from '../src/sources/connectors/git/git-repository.testing';
import { idPath } from './documents-helpers';
import { agentData, agentDataProcess } from './support/agent-data-cli';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

const KEY = 'cli-sources-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };

type Run = { id: string; status: string; counts: Record<string, number> };

/**
 * `agent-data sources list` and `sources sync` (docs/cli.md, Sources) against a running server
 * that keeps a real git repository in sync (and one it cannot reach): the table and the API's
 * answer, a sync waited for with its counts and exit code, deletions held then confirmed, a
 * failed run's reason, and an unknown source refused in one line.
 */
describe('agent-data sources', () => {
  let t: TestApp;
  let repo: TestRepository;
  let dir: string;
  const env = () => ({ AGENT_DATA_URL: t.baseUrl, AGENT_DATA_API_KEY: KEY });
  const sources = (...args: string[]) => agentData(['sources', ...args], env());
  const get = (path: string) => request(t.baseUrl).get(path).set(AS);
  /** The last run of `id` once it has ended. */
  const ended = (id: string) =>
    waitFor(
      async () => {
        const run: Run | null = (await get(`/sources/${id}`).expect(200)).body.last_run;
        return run !== null && !['queued', 'running'].includes(run.status) ? run : undefined;
      },
      `a run of ${id} to end`,
      { timeoutMs: 30_000, intervalMs: 100 },
    );

  beforeAll(async () => {
    repo = await TestRepository.create();
    await repo.write({
      'guide.md': '# Guide\n\nRestart the lanterns.\n',
      'ops/backup.md': '# Backups\n\nNightly at two.\n',
      'ops/restore.md': '# Restore\n\nFrom the latest snapshot.\n',
      'ops/rotate.md': '# Rotate\n\nThe keys, monthly.\n',
    });
    await repo.commit('first');
    dir = await mkdtemp(join(tmpdir(), 'agent-data-cli-sources-'));
    const file = join(dir, 'sources.json');
    await writeFile(
      file,
      JSON.stringify({
        sources: [
          { id: 'handbook', kind: 'git', url: repo.url, ref: 'main', mount: 'handbook' },
          {
            id: 'lost',
            kind: 'git',
            url: `file://${join(dir, 'no-such-repository.git')}`,
            mount: 'lost',
          },
        ],
      }),
    );
    t = await startTestApp({ API_KEYS: `ops:${KEY}:admin`, SOURCES_FILE: file, DATA_DIR: dir });
    expect(await ended('handbook')).toMatchObject({ status: 'succeeded' });
    // A failed run is tried again at once, then in 15 minutes: the state holds from there.
    await waitFor(
      async () => (await get('/sources/lost').expect(200)).body.failures === 2,
      'the unreachable source to fail twice',
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(await ended('lost')).toMatchObject({ status: 'failed' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await repo?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the sources in a table, and as the API answers with --json', async () => {
    const listed = await sources('list');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header.split(/\s{2,}/)).toEqual([
      'id',
      'kind',
      'mount',
      'state',
      'documents',
      'last run',
      'next run',
    ]);
    const time = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ';
    expect(rows).toEqual([
      expect.stringMatching(
        new RegExp(`^handbook\\s+git\\s+handbook\\s+idle\\s+4\\s+succeeded ${time}\\s+${time}$`),
      ),
      expect.stringMatching(new RegExp(`^lost\\s+git\\s+lost\\s+failing\\s+0\\s+failed ${time}`)),
    ]);

    const json = await sources('list', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await get('/sources').expect(200)).body);
  });

  it('syncs a source and waits for its run: the counts, exit code 0', async () => {
    await repo.write({ 'guide.md': '# Guide\n\nRestart the lanterns twice.\n' });
    await repo.commit('second');
    const synced = await sources('sync', 'handbook', '--wait');
    expect(synced.code).toBe(0);
    const [status, counts] = synced.stdout.trimEnd().split('\n');
    expect(status).toMatch(/^run \d+ of handbook succeeded in \d+\.\d s$/);
    expect(counts).toBe(
      'checked 4, created 0, updated 1, moved 0, unchanged 3, deleted 0, held 0, skipped 0, failed 0',
    );
    expect(synced.stderr).toMatch(
      /^run \d+ of handbook (queued|running); waiting for it to end\n$/,
    );
    expect((await get(idPath('handbook/guide.md')).expect(200)).body.body).toContain('twice');
  });

  it('prints the run as the server gives it with --json, and returns at once without --wait', async () => {
    const waited = await sources('sync', 'handbook', '--wait', '--json');
    expect(waited).toMatchObject({ code: 0, stderr: '' });
    const run = JSON.parse(waited.stdout);
    expect(run).toMatchObject({ source_id: 'handbook', status: 'succeeded', trigger: 'manual' });
    const { body } = await get('/sources/handbook/runs?limit=1').expect(200);
    expect(body.runs[0]).toEqual(run);

    const asked = await sources('sync', 'handbook');
    expect(asked.code).toBe(0);
    expect(asked.stdout).toMatch(/^run \d+ of handbook (queued|running)\n$/);
    await ended('handbook');
  });

  it('holds deletions beyond max_delete, and makes them with --confirm-deletions', async () => {
    await repo.remove('ops/backup.md', 'ops/restore.md');
    await repo.commit('third');
    const held = await sources('sync', 'handbook', '--wait');
    expect(held.code).toBe(0);
    expect(held.stdout).toContain('deleted 0, held 2,');
    expect(held.stdout).toContain(
      '2 deletions held: agent-data sources sync handbook --confirm-deletions makes them',
    );
    const listed = await sources('list');
    expect(listed.stdout).toContain(
      'handbook holds 2 deletions: agent-data sources sync handbook --confirm-deletions makes them',
    );
    await get(idPath('handbook/ops/backup.md')).expect(200);

    const confirmed = await sources('sync', 'handbook', '--confirm-deletions', '--wait');
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('deleted 2, held 0,');
    await get(idPath('handbook/ops/backup.md')).expect(404);
    expect((await sources('list')).stdout).not.toContain('holds');
  });

  it('exits 1 with the reason on stderr when the run fails', async () => {
    const failed = await sources('sync', 'lost', '--wait');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^run \d+ of lost failed in \d+\.\d s\n$/);
    const reason = failed.stderr.trimEnd().split('\n').pop();
    expect(reason).toMatch(/^agent-data: run \d+ of lost failed: .*no-such-repository/);
  });

  it('refuses an unknown source in one line, exit code 1, as a process', async () => {
    const unknown = await agentDataProcess(['sources', 'sync', 'nope', '--wait'], env());
    expect(unknown).toEqual({
      code: 1,
      stdout: '',
      stderr: 'agent-data: source nope does not exist\n',
    });
  }, 30_000);

  it('answers a usage error with the help of the command, exit code 2', async () => {
    const missing = await sources('sync');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^agent-data: sources sync takes one source id\n\n/);
    expect(missing.stderr).toContain('agent-data sources sync ID [--confirm-deletions]');
    const unknown = await sources('purge');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown sources command "purge"');
    expect((await sources('--help')).stdout).toContain('agent-data sources <list|sync>');
  });
});
