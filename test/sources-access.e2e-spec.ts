import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

/**
 * The sources' routes under an access policy: a source whose mount the caller may not read
 * at all is answered as an absent one, whatever the route; a run's failed items name only
 * documents the caller may read; a mount read only in part gives no count of its documents;
 * search names a source's document, and where it came from, only to a caller who may read it.
 */
const KEYS = { ops: 'ops-sources-key-0123456789abcdef', reader: 'reader-sources-key-0123456789ab' };
const POLICY = {
  rules: [
    { who: ['key:ops'], read: '*', write: ['*'] },
    { who: ['key:reader'], read: ['open/', 'mixed/seen/'], write: [] },
  ],
};
const as = (who: keyof typeof KEYS) => ({ 'X-API-Key': KEYS[who] });

describe('sources under an access policy', () => {
  let t: TestApp;
  let dir: string;
  const folder = async (name: string, files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(dir, name, path, '..'), { recursive: true });
      await writeFile(join(dir, name, path), text);
    }
    await request(t.baseUrl)
      .post('/sources')
      .set(as('ops'))
      .send({ id: name, kind: 'folder', path: join(dir, name), mount: name })
      .expect(201);
    await waitFor(
      async () => {
        const { body } = await request(t.baseUrl).get(`/sources/${name}`).set(as('ops'));
        return body.last_run !== null && !['queued', 'running'].includes(body.last_run.status);
      },
      `the first run of ${name}`,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  };
  // A file whose front matter cannot be read fails, and is named among the run's failures.
  const broken = '---\ntitle: [unclosed\n---\nbody\n';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-data-sources-access-'));
    t = await startTestApp({
      API_KEYS: `ops:${KEYS.ops}:admin;reader:${KEYS.reader}:admin`,
      ACCESS_POLICY: JSON.stringify(POLICY),
      DATA_DIR: dir,
      VECTOR_SYNC_ENABLED: 'true',
    });
    await folder('open', { 'a.md': '# A\n\nWhere the quokkas sleep.\n', 'bad.md': broken });
    await folder('closed', { 'b.md': '# B\n\nWhere the quokkas hide.\n', 'bad.md': broken });
    await folder('mixed', { 'seen/c.md': '# C\n', 'seen/bad.md': broken, 'hidden/bad.md': broken });
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists only the sources whose mount the caller may read', async () => {
    const all = await request(t.baseUrl).get('/sources').set(as('ops')).expect(200);
    expect(all.body.sources.map((s: { id: string }) => s.id)).toEqual(['closed', 'mixed', 'open']);
    const some = await request(t.baseUrl).get('/sources').set(as('reader')).expect(200);
    expect(some.body.sources.map((s: { id: string }) => s.id)).toEqual(['mixed', 'open']);
  });

  it('answers every route of an unreadable source as for an absent one', async () => {
    for (const [method, path] of [
      ['get', '/sources/closed'],
      ['get', '/sources/closed/runs'],
      ['post', '/sources/closed/sync'],
    ] as const) {
      const hidden = await request(t.baseUrl)[method](path).set(as('reader')).expect(404);
      const absent = await request(t.baseUrl)
        [method](path.replace('closed', 'nowhere'))
        .set(as('reader'))
        .expect(404);
      expect(hidden.body.error.code).toBe(absent.body.error.code);
      expect(hidden.body.error.message.replace('closed', 'X')).toBe(
        absent.body.error.message.replace('nowhere', 'X'),
      );
    }
  });

  it('answers an id no source can have (a NUL byte, capitals) as an absent source, not with the database', async () => {
    for (const path of ['/sources/%00', '/sources/%00/runs', '/sources/Not-An-Id/runs']) {
      const absent = await request(t.baseUrl).get(path).set(as('ops')).expect(404);
      expect(absent.body.error.code).toBe('NOT_FOUND');
      expect(absent.body.error.message).not.toMatch(/database|byte sequence/);
    }
  });

  it('names only readable documents among a run’s failures, and counts a mount read whole only', async () => {
    const ops = await request(t.baseUrl).get('/sources/mixed').set(as('ops')).expect(200);
    expect(
      ops.body.last_run.failed_items.map((f: { document_id: string }) => f.document_id).sort(),
    ).toEqual(['mixed/hidden/bad.md', 'mixed/seen/bad.md']);
    expect(ops.body.documents).toBe(1);
    const reader = await request(t.baseUrl).get('/sources/mixed').set(as('reader')).expect(200);
    expect(
      reader.body.last_run.failed_items.map((f: { document_id: string }) => f.document_id),
    ).toEqual(['mixed/seen/bad.md']);
    expect(reader.body.documents).toBeNull();
    const runs = await request(t.baseUrl).get('/sources/mixed/runs').set(as('reader')).expect(200);
    expect(JSON.stringify(runs.body)).not.toContain('hidden');
    const open = await request(t.baseUrl).get('/sources/open').set(as('reader')).expect(200);
    expect(open.body.documents).toBe(1);
  });

  it('names a source’s document and its origin in search only to those who may read it', async () => {
    const hits = async (who: keyof typeof KEYS, mode: string) => {
      const { body } = await request(t.baseUrl)
        .get('/search')
        .query({ query: 'quokkas', mode })
        .set(as(who))
        .expect(200);
      return body.results as Array<{ document_id: string; source_uri?: string }>;
    };
    // Both documents are found once the pipeline has indexed them (ops reads everything).
    await waitFor(
      async () => (await hits('ops', 'lexical')).length === 2,
      'both sources’ documents to be searchable',
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    for (const mode of ['lexical', 'hybrid', 'vector']) {
      const seen = await hits('reader', mode);
      expect(seen.map((hit) => hit.document_id)).toEqual(['open/a.md']);
      expect(seen[0].source_uri).toBe(join(dir, 'open', 'a.md'));
      expect(JSON.stringify(seen)).not.toContain('closed');
    }
    const all = await hits('ops', 'lexical');
    expect(all.map((hit) => hit.source_uri).sort()).toEqual([
      join(dir, 'closed', 'b.md'),
      join(dir, 'open', 'a.md'),
    ]);
  });
});
