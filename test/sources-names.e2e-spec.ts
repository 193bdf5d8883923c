import { mkdtemp, rm, writeFile, mkdir, rename, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import { sourceRunEnded } from './support/source-runs';

/**
 * A folder source names its documents as `agent-data import` names files: in Unicode's
 * composed form (NFC), whatever form the file system holds the names in (macOS writes them
 * decomposed, NFD: `e` and a combining accent). Two files whose names differ only so (both
 * can exist on Linux) would be one document: the first keeps it, the other fails, named.
 */
const KEY = 'sources-names-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };
const COMPOSED = 'café.md';
const DECOMPOSED = 'cafe\u0301.md';

type Run = {
  id: string;
  status: string;
  counts: Record<string, number>;
  failed_items: Array<{ key: string; document_id: string; reason: string }>;
};

describe('a folder source names its documents in the composed form', () => {
  let t: TestApp;
  let dir: string;
  const get = (path: string) => request(t.baseUrl).get(path).set(AS);
  const sync = async (id: string): Promise<Run> => {
    const { body } = await request(t.baseUrl).post(`/sources/${id}/sync`).set(AS).expect(202);
    return sourceRunEnded<Run>(t.baseUrl, AS, id, (r) => r.id === body.id, `run ${body.id}`);
  };
  const declare = async (id: string): Promise<Run> => {
    await request(t.baseUrl)
      .post('/sources')
      .set(AS)
      .send({ id, kind: 'folder', path: join(dir, id), mount: id, enabled: false })
      .expect(201);
    return sync(id);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-data-source-names-'));
    t = await startTestApp({ API_KEYS: `ops:${KEY}:admin`, DATA_DIR: dir });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('names a decomposed file name composed, and keeps writing that document', async () => {
    await mkdir(join(dir, 'mac'));
    await writeFile(join(dir, 'mac', DECOMPOSED), '# Café\n\nOpening hours.\n');
    const first = await declare('mac');
    expect(first.counts).toMatchObject({ created: 1, failed: 0 });
    expect((await get(idPath(`mac/${COMPOSED}`)).expect(200)).body.body).toContain('Opening');
    const listed = (await get('/documents?prefix=mac/').expect(200)).body;
    expect(listed.items.map((d: { document_id: string }) => d.document_id)).toEqual([
      `mac/${COMPOSED}`,
    ]);

    await writeFile(join(dir, 'mac', DECOMPOSED), '# Café\n\nOpening hours, summer.\n');
    const edited = await sync('mac');
    expect(edited.counts).toMatchObject({ created: 0, updated: 1, failed: 0 });
    expect((await get(idPath(`mac/${COMPOSED}`)).expect(200)).body.body).toContain('summer');
    expect((await sync('mac')).counts).toMatchObject({ created: 0, updated: 0, unchanged: 1 });
  });

  it('fails the second of two names that differ only in composition, naming the first', async () => {
    await mkdir(join(dir, 'twins'));
    await writeFile(join(dir, 'twins', COMPOSED), '# Composed\n');
    await writeFile(join(dir, 'twins', DECOMPOSED), '# Decomposed\n');
    const first = await declare('twins');
    expect(first.counts).toMatchObject({ created: 1, failed: 1 });
    const [failed] = first.failed_items;
    const other = failed.key === COMPOSED ? DECOMPOSED : COMPOSED;
    expect(failed).toEqual({
      key: failed.key,
      document_id: `twins/${COMPOSED}`,
      reason: `${other} has this name, composed (NFC), and holds twins/${COMPOSED}`,
    });
    const kept = (await get(idPath(`twins/${COMPOSED}`)).expect(200)).body;
    expect(kept.title).toBe(other === COMPOSED ? 'Composed' : 'Decomposed');

    // The next run: the one written keeps its document, the other still fails, nothing moves.
    const again = await sync('twins');
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0, failed: 1 });
    expect(again.failed_items.map((item) => item.key)).toEqual([failed.key]);
    expect((await get(idPath(`twins/${COMPOSED}`)).expect(200)).body.title).toBe(kept.title);
  });

  it('keeps a document an earlier release named decomposed under that id', async () => {
    await mkdir(join(dir, 'old'));
    await writeFile(join(dir, 'old', DECOMPOSED), '# Café\n\nFirst menu.\n');
    await declare('old');
    // What a release that kept file names as they came left: the item's document at the
    // decomposed id. The source lets go of it, it is moved there, and the source takes it back.
    const db = await t.db.client();
    const { rows } = await db.query(
      `DELETE FROM kb_source_items WHERE source_id = 'old' RETURNING *`,
    );
    await request(t.baseUrl)
      .post(`${idPath(`old/${COMPOSED}`)}/move`)
      .set(AS)
      .send({ to: `old/${DECOMPOSED}` })
      .expect(200);
    await db.query(
      `INSERT INTO kb_source_items (source_id, key, document_id, version, uri)
       VALUES ('old', $1, $2, $3, $4)`,
      [rows[0].key, `old/${DECOMPOSED}`, rows[0].version, rows[0].uri],
    );

    await writeFile(join(dir, 'old', DECOMPOSED), '# Café\n\nSecond menu.\n');
    const run = await sync('old');
    expect(run.counts).toMatchObject({ created: 0, updated: 1, deleted: 0, failed: 0 });
    expect((await get(idPath(`old/${DECOMPOSED}`)).expect(200)).body.body).toContain('Second');
    await get(idPath(`old/${COMPOSED}`)).expect(404);
  });

  it('keeps the document of a file renamed to the other form of its name', async () => {
    await mkdir(join(dir, 'renamed'));
    await writeFile(join(dir, 'renamed', COMPOSED), '# Café\n\nBreakfast.\n');
    await declare('renamed');
    const first = (await get(idPath(`renamed/${COMPOSED}`)).expect(200)).body;
    // Renamed as such (a move, as the folder sees it), then written anew under the other form
    // (a file gone and a file come).
    await rename(join(dir, 'renamed', COMPOSED), join(dir, 'renamed', DECOMPOSED));
    const moved = await sync('renamed');
    expect(moved.counts).toMatchObject({ created: 0, moved: 0, deleted: 0, failed: 0 });
    const document = (await get(idPath(`renamed/${COMPOSED}`)).expect(200)).body;
    expect(document.metadata.source_uri).toBe(join(dir, 'renamed', DECOMPOSED));
    await unlink(join(dir, 'renamed', DECOMPOSED));
    await writeFile(join(dir, 'renamed', COMPOSED), '# Café\n\nBreakfast and lunch.\n');
    const again = await sync('renamed');
    expect(again.counts).toMatchObject({ created: 0, updated: 1, deleted: 0, failed: 0 });
    const after = (await get(idPath(`renamed/${COMPOSED}`)).expect(200)).body;
    expect(after.body).toContain('lunch');
    // The same document all along: never deleted and created again.
    expect(after.created_at).toBe(first.created_at);
    expect(after.revision).toBe(first.revision + 2);
  });

  it('keeps a mount as it was declared', async () => {
    await mkdir(join(dir, 'mount'));
    await writeFile(join(dir, 'mount', 'menu.md'), '# Menu\n');
    await request(t.baseUrl)
      .post('/sources')
      .set(AS)
      .send({
        id: 'decomposed-mount',
        kind: 'folder',
        path: join(dir, 'mount'),
        mount: 'cafe\u0301',
        enabled: false,
      })
      .expect(201);
    expect((await sync('decomposed-mount')).counts).toMatchObject({ created: 1, failed: 0 });
    const document = (await get(idPath('cafe\u0301/menu.md')).expect(200)).body;
    expect(document.source).toMatchObject({ id: 'decomposed-mount' });
  });
});
