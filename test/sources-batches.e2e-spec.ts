import request from 'supertest';
import { DataSource } from 'typeorm';
import { SourcesRepository } from '../src/sources/sources.repository';
import { idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import { temporaryFolders } from './support/folders';
import { waitFor } from './support/wait';

/**
 * A source's bookkeeping is written a batch at a time: its claims and its records are one
 * statement per batch of 200 items, not one per item (a first sync of 10 000 files spent most
 * of its time on those round trips: docs/performance.md), and they keep what a statement per
 * item kept: a claim leaves a written version alone, a record stores a page's validators as
 * they came.
 */
const KEY = 'sources-batches-key-0123456789abcdef';
const AS = { 'X-API-Key': KEY };
const FILES = 450;

describe('source bookkeeping in batches', () => {
  let t: TestApp;
  let repository: SourcesRepository;
  const folders = temporaryFolders('agent-data-source-batches-');

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS: `ops:${KEY}:admin` });
    repository = t.app.get(SourcesRepository);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    folders.removeAll();
  });

  it('claims and records a first sync of 450 files in three statements each', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`f${i % 7}/doc-${i}.md`] = `# Doc ${i}\n\nBody ${i}.\n`;
    const root = folders.make(files);
    const statements: string[] = [];
    const dataSource = t.app.get(DataSource);
    const query = dataSource.query.bind(dataSource);
    jest.spyOn(dataSource, 'query').mockImplementation((text: string, ...rest: unknown[]) => {
      statements.push(text);
      return (query as (...args: unknown[]) => Promise<unknown>)(text, ...rest);
    });

    // Declared disabled and synced once by hand: the watch a first sync starts (and the run
    // it makes) would add its own statements to the ones counted.
    await request(t.baseUrl)
      .post('/sources')
      .set(AS)
      .send({ id: 'many', kind: 'folder', path: root, mount: 'many', enabled: false })
      .expect(201);
    const asked = await request(t.baseUrl).post('/sources/many/sync').set(AS).expect(202);
    const run = await waitFor(
      async () => {
        const { body } = await request(t.baseUrl).get('/sources/many').set(AS).expect(200);
        const last = body.last_run;
        return last?.id === asked.body.id && !['queued', 'running'].includes(last.status)
          ? last
          : undefined;
      },
      'the first run of many',
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    jest.restoreAllMocks();

    expect(run.status).toBe('succeeded');
    expect(run.counts).toMatchObject({ created: FILES, failed: 0 });
    const claims = statements.filter((text) => /^\s*INSERT INTO kb_source_items/.test(text));
    const records = statements.filter((text) => /^\s*UPDATE kb_source_items/.test(text));
    expect([claims.length, records.length]).toEqual([3, 3]);
    const items = await repository.items('many');
    expect(items.size).toBe(FILES);
    expect([...items.values()].filter((item) => item.version === null)).toEqual([]);
    const doc = (await request(t.baseUrl).get(idPath('many/f3/doc-10.md')).set(AS).expect(200))
      .body;
    expect(doc.metadata).toMatchObject({
      source_id: 'many',
      source_version: items.get('f3/doc-10.md')!.version,
    });
  }, 90_000);

  it('keeps a written version through a claim, and validators as they came', async () => {
    const etag = 'W/"a\\"b,{c}"';
    await repository.claim('direct', [
      { key: 'a.md', documentId: 'direct/a.md', uri: 'https://x.test/a' },
      { key: 'b.md', documentId: 'direct/b.md', uri: 'https://x.test/b' },
    ]);
    await repository.recordItems('direct', [
      { key: 'a.md', version: 'v1', uri: 'https://x.test/a', validators: { etag } },
      { key: 'b.md', version: 'v2', uri: 'https://x.test/b?moved' },
    ]);
    await repository.claim('direct', [
      { key: 'a.md', documentId: 'direct/a.md', uri: 'https://x.test/elsewhere' },
    ]);

    const items = await repository.items('direct');
    expect(items.get('a.md')).toEqual({
      key: 'a.md',
      document_id: 'direct/a.md',
      version: 'v1',
      uri: 'https://x.test/a',
      validators: { etag },
    });
    expect(items.get('b.md')).toEqual({
      key: 'b.md',
      document_id: 'direct/b.md',
      version: 'v2',
      uri: 'https://x.test/b?moved',
      validators: null,
    });
  });
});
