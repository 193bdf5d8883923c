import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { TestRepository } from '../src/sources/connectors/git/git-repository.testing';
import { startTestApp, TestApp } from './support/app';
import { idPath } from './documents-helpers';
import { aSavedPage } from './factories';
import { waitFor } from './support/wait';

/**
 * Sources end to end, on a real git repository of this machine: declared in SOURCES_FILE,
 * synced into their mount, kept in sync as the repository moves, never touching an agent's
 * document, holding mass deletions, refusing a broken file without changing anything.
 */
const KEY = 'sources-admin-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };

type Run = {
  id: string;
  status: string;
  trigger: string;
  counts: Record<string, number>;
  failed_items: Array<{ key: string; reason: string }>;
  message: string | null;
  version: string | null;
};

describe('sources', () => {
  let t: TestApp;
  let repo: TestRepository;
  let dir: string;
  let file: string;

  const declare = async (sources: unknown[]) =>
    writeFile(file, JSON.stringify({ sources }, null, 2));
  const gitSource = (overrides: Record<string, unknown> = {}) => ({
    id: 'handbook',
    kind: 'git',
    url: repo.url,
    ref: 'main',
    mount: 'handbook',
    every: '1h',
    ...overrides,
  });
  const get = (path: string) => request(t.baseUrl).get(path).set(AS);
  /** Asks for a sync and waits for that run to end. */
  const sync = async (query = ''): Promise<Run> => {
    const asked = await request(t.baseUrl)
      .post(`/sources/handbook/sync${query}`)
      .set(AS)
      .expect(202);
    return ended(asked.body.id);
  };
  const ended = async (runId: string): Promise<Run> => {
    let run: Run | undefined;
    await waitFor(
      async () => {
        const { body } = await get('/sources/handbook/runs').expect(200);
        run = body.runs.find((r: Run) => r.id === runId);
        return run !== undefined && !['queued', 'running'].includes(run.status);
      },
      `run ${runId} to end`,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    return run!;
  };
  const document = async (id: string) => (await get(idPath(id))).body;

  beforeAll(async () => {
    repo = await TestRepository.create();
    await repo.write({
      'guide.md': '---\ntitle: The guide\ntags: [ops]\n---\n# Guide\n\nRestart the lanterns.\n',
      'ops/backup.md': '# Backups\n\nNightly at two.\n',
      'ops/restore.md': '# Restore\n\nFrom the latest snapshot.\n',
      'notes.txt': 'plain notes\n',
      'ops/tides.html': aSavedPage('Tide tables', 'High water at <i>six</i>.'),
      'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    });
    await repo.commit('first');
    dir = await mkdtemp(join(tmpdir(), 'agent-data-sources-'));
    file = join(dir, 'sources.json');
    await declare([gitSource()]);
    t = await startTestApp({
      API_KEYS: `ops:${KEY}:admin`,
      SOURCES_FILE: file,
      DATA_DIR: dir,
      VECTOR_SYNC_ENABLED: 'true',
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await repo?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('syncs a declared repository into its mount, with provenance', async () => {
    let first: Run | undefined;
    await waitFor(
      async () => {
        const { body } = await get('/sources/handbook').expect(200);
        first = body.last_run;
        return first !== null && !['queued', 'running'].includes(first!.status);
      },
      'the first run',
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    // Queued because the source was declared, not by its schedule.
    expect(first).toMatchObject({ status: 'succeeded', trigger: 'declared' });
    expect(first!.counts).toMatchObject({ created: 5, skipped: 1, failed: 0, deleted: 0 });
    const guide = await document('handbook/guide.md');
    expect(guide).toMatchObject({ title: 'The guide', tags: ['ops'] });
    expect(guide.body).toContain('Restart the lanterns.');
    expect(guide.metadata).toMatchObject({
      source_id: 'handbook',
      source_uri: expect.stringMatching(/@[0-9a-f]{40}:guide\.md$/),
    });
    // Who keeps it, as the server says (the console offers no edit for it).
    expect(guide.source).toEqual({ id: 'handbook', uri: guide.metadata.source_uri });
    const { body: source } = await get('/sources/handbook').expect(200);
    expect(source).toMatchObject({ origin: 'file', documents: 5, state: 'idle', failures: 0 });
    // An HTML file is read as a fetched page is: its article, without the site around it.
    const tides = await document('handbook/ops/tides.html');
    expect(tides).toMatchObject({ title: 'Tide tables', metadata: { source_type: 'html' } });
    expect(tides.body).toContain('High water at _six_. See [the notes](notes.txt).');
    expect(tides.body).not.toMatch(/Site menu|Site banner|Site footer/);
  });

  it('reports its runs, its last success and its documents in /metrics', async () => {
    const { body: source } = await get('/sources/handbook').expect(200);
    const { text } = await request(t.baseUrl).get('/metrics').expect(200);
    const sample = (name: string) => {
      const line = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm');
      return [...text.matchAll(line)].map((m) => ({ labels: m[1], value: Number(m[2]) }));
    };
    expect(sample('source_sync_runs_total')).toEqual([
      { labels: 'source="handbook",status="succeeded"', value: 1 },
    ]);
    expect(sample('source_last_success_timestamp_seconds')).toEqual([
      { labels: 'source="handbook"', value: Date.parse(source.last_success_at) / 1000 },
    ]);
    expect(sample('source_documents')).toEqual([
      { labels: 'source="handbook"', value: source.documents },
    ]);
    expect(source.documents).toBe(5);
  });

  it('keeps its documents read-only to writers, and an agent document beside them', async () => {
    const refused = await request(t.baseUrl)
      .put(idPath('handbook/guide.md'))
      .set(AS)
      .send({ body: 'edited here' })
      .expect(403);
    expect(refused.body.error).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(refused.body.error.message).toContain('source "handbook"');
    expect(refused.body.error.message).toContain('guide.md');
    await request(t.baseUrl)
      .post('/documents')
      .set(AS)
      .send({ document_id: 'handbook/agent-note.md', body: 'written by an agent' })
      .expect(201);
  });

  it('writes nothing when nothing changed', async () => {
    const before = await document('handbook/guide.md');
    const run = await sync();
    expect(run.status).toBe('succeeded');
    expect(run.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect((await document('handbook/guide.md')).revision).toBe(before.revision);
  });

  it('follows a commit: an edit, a rename as a move, a deletion; the agent note stays', async () => {
    const restoreRevision = (await document('handbook/ops/restore.md')).revision;
    await repo.write({ 'guide.md': '# Guide\n\nRestart the lanterns twice.\n' });
    await repo.move('ops/restore.md', 'ops/recovery.md');
    await repo.remove('notes.txt');
    await repo.commit('second');
    const run = await sync();
    expect(run.status).toBe('succeeded');
    // The renamed file: moved, then written once more to name its new path.
    expect(run.counts).toMatchObject({ updated: 2, moved: 1, deleted: 1, failed: 0 });
    expect((await document('handbook/guide.md')).body).toContain('twice');
    await get(idPath('handbook/ops/restore.md')).expect(404);
    await get(idPath('handbook/notes.txt')).expect(404);
    const moved = await document('handbook/ops/recovery.md');
    expect(moved.revision).toBe(restoreRevision + 1);
    expect(moved.metadata.source_uri).toMatch(/@[0-9a-f]{40}:ops\/recovery\.md$/);
    expect(moved.body).toContain('From the latest snapshot.');
    expect((await document('handbook/agent-note.md')).body).toBe('written by an agent');
    expect((await document('handbook/agent-note.md')).source).toBeNull();
  });

  it('holds deletions beyond max_delete until they are confirmed', async () => {
    await repo.remove('ops/backup.md', 'ops/recovery.md');
    await repo.commit('third');
    const held = await sync();
    expect(held.counts).toMatchObject({ held: 2, deleted: 0 });
    expect(held.message).toContain('confirm_deletions=true');
    await get(idPath('handbook/ops/backup.md')).expect(200);
    const { body: source } = await get('/sources/handbook').expect(200);
    expect(source.held_deletions).toBe(2);
    const confirmed = await sync('?confirm_deletions=true');
    expect(confirmed.counts).toMatchObject({ deleted: 2 });
    await get(idPath('handbook/ops/backup.md')).expect(404);
    expect((await document('handbook/agent-note.md')).body).toBe('written by an agent');
  });

  it('says what queued each run: its schedule, or a declaration that changed', async () => {
    const client = await t.db.client();
    const due = async (trigger: string) => {
      await client.query(`UPDATE kb_sources SET next_run_at = now() WHERE id = 'handbook'`);
      let run: Run | undefined;
      await waitFor(
        async () => {
          const { body } = await get('/sources/handbook/runs').expect(200);
          run = body.runs[0];
          return run!.trigger === trigger && !['queued', 'running'].includes(run!.status);
        },
        `a ${trigger} run`,
        { timeoutMs: 30_000, intervalMs: 100 },
      );
    };
    try {
      await due('schedule');
      await declare([gitSource({ every: '2h' })]);
      await waitFor(
        async () => (await get('/sources/handbook').expect(200)).body.declaration.every === '2h',
        'the changed declaration',
      );
      await due('declared');
    } finally {
      await client.end();
    }
  });

  it('makes one run of two triggers at once', async () => {
    const [a, b] = await Promise.all([
      request(t.baseUrl).post('/sources/handbook/sync').set(AS).expect(202),
      request(t.baseUrl).post('/sources/handbook/sync').set(AS).expect(202),
    ]);
    expect(a.body.id).toBe(b.body.id);
    await ended(a.body.id);
  });

  it('names its source in search hits', async () => {
    const hit = await waitFor(
      async () => {
        const { body } = await get('/search?query=lanterns&mode=lexical').expect(200);
        return body.results.find(
          (r: { document_id: string }) => r.document_id === 'handbook/guide.md',
        );
      },
      'the guide to be indexed',
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(hit.source_uri).toMatch(/@[0-9a-f]{40}:guide\.md$/);
  });

  it('changes nothing on an invalid sources file, and says why', async () => {
    await writeFile(file, '{"sources": [{"id": "handbook", "kind": "git"}]}');
    await waitFor(
      async () => (await get('/sources').expect(200)).body.file_error !== null,
      'the file to be refused',
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const { body } = await get('/sources').expect(200);
    expect(body.file_error).toMatch(/sources\[0\]/);
    expect(body.sources.map((s: { id: string }) => s.id)).toEqual(['handbook']);
    await request(t.baseUrl)
      .post('/sources')
      .set(AS)
      .send(gitSource({ id: 'other', mount: 'other' }))
      .expect(403);
    await declare([gitSource()]);
    await waitFor(
      async () => (await get('/sources').expect(200)).body.file_error === null,
      'the file to be taken again',
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  });

  it('removes a source no longer declared, and softly the documents it owned', async () => {
    await declare([]);
    await waitFor(
      async () => (await get('/sources').expect(200)).body.sources.length === 0,
      'the source to be removed',
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await get(idPath('handbook/guide.md')).expect(404);
    expect((await document('handbook/agent-note.md')).body).toBe('written by an agent');
  });
});
