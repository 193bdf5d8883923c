import request from 'supertest';
import { idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import type { Json } from './support/mcp-http';
import { waitFor } from './support/wait';
import { namedKeys } from './support/keys';

const KEYS = {
  admin: 'anchors-admin-key-0123456789abcdef',
  bob: 'anchors-bob-key-0123456789abcdef01',
};
const { apiKeys: API_KEYS, as } = namedKeys(KEYS);
/** Bob reads kb/services/ only. */
const POLICY = {
  rules: [
    { who: ['key:admin'], read: '*', write: '*' },
    { who: ['key:bob'], read: ['kb/services/'], write: ['kb/services/'] },
  ],
};

/**
 * Anchor text (docs/search.md, "Anchor text"): the texts of the links pointing at a document
 * are a field of its lexical record, from the links written in its own folder or below it,
 * kept as the links, the documents they name, and the documents themselves change.
 */
describe('anchor text in lexical search', () => {
  jest.setTimeout(120_000);
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      API_KEYS,
      ACCESS_POLICY: JSON.stringify(POLICY),
      VECTOR_SYNC_ENABLED: 'true',
      VECTOR_SKIP_PREFIXES: 'kb/services/skip/',
    });
  });
  afterAll(() => t?.close());

  const put = (document_id: string, body: string) =>
    request(t.baseUrl).post('/documents').set(as('admin')).send({ document_id, body }).expect(201);
  const found = async (query: string, who: keyof typeof KEYS = 'admin') =>
    (
      await request(t.baseUrl)
        .get('/search')
        .set(as(who))
        .query({ query, mode: 'lexical' })
        .expect(200)
    ).body.results
      .map((hit: Json) => hit.document_id as string)
      .sort();
  const wait = { timeoutMs: Number(process.env.ANCHOR_WAIT_MS ?? 60_000), intervalMs: 100 };
  /** Waits until the pipeline and the anchor fields have nothing left to do. */
  const settled = () =>
    waitFor(
      async () => {
        const status = (
          await request(t.baseUrl).get('/admin/vectors/status').set(as('admin')).expect(200)
        ).body;
        return status.counts.pending === 0 && status.leased === 0 && status.anchor_fields.due === 0;
      },
      'the pipeline and the anchor fields to settle',
      wait,
    );
  /**
   * Waits until `query` finds exactly `ids` (sorted), for `who`, and checks it still does once
   * nothing is left to index (so that "not found" is not "not read yet").
   */
  const finds = async (query: string, ids: string[], who: keyof typeof KEYS = 'admin') => {
    const expected = [...ids].sort();
    await waitFor(
      async () => JSON.stringify(await found(query, who)) === JSON.stringify(expected),
      `"${query}" to find ${ids.join(', ') || 'nothing'}`,
      wait,
    );
    await settled();
    expect(await found(query, who)).toEqual(expected);
  };

  it('finds a document by the words of the links to it from its folder, as they change', async () => {
    await put('kb/services/quasar.md', '# Quasar\n\nServes the telemetry feed.');
    await put('kb/services/index.md', '# Services\n\n- [the zorbulator daemon](quasar.md)');
    await finds('zorbulator', ['kb/services/index.md', 'kb/services/quasar.md']);
    // The target's own words still find it.
    await finds('telemetry', ['kb/services/quasar.md']);

    // The link's text changes: the old words no longer find the target, the new ones do.
    await request(t.baseUrl)
      .put(idPath('kb/services/index.md'))
      .set(as('admin'))
      .send({ body: '# Services\n\n- [the quibbler daemon](quasar.md)' })
      .expect(200);
    await finds('quibbler', ['kb/services/index.md', 'kb/services/quasar.md']);
    await finds('zorbulator', []);

    // The linking document is deleted: its words are gone from the target too.
    await request(t.baseUrl).delete(idPath('kb/services/index.md')).set(as('admin')).expect(200);
    await finds('quibbler', []);
  });

  it('never lets a link from outside the folder describe a document', async () => {
    await put('kb/services/pulsar.md', '# Pulsar\n\nThe queue.');
    await put('kb/services/list.md', '# List\n\n[the frobnicator](pulsar.md)');
    await put('other/notes.md', '# Notes\n\nSee [the wimbledrome](../kb/services/pulsar.md).');
    await finds('frobnicator', ['kb/services/list.md', 'kb/services/pulsar.md']);
    // Bob may read the target and the list beside it, not other/: its words never reach him.
    await finds('frobnicator', ['kb/services/list.md', 'kb/services/pulsar.md'], 'bob');
    await finds('wimbledrome', ['other/notes.md']);
    await finds('wimbledrome', [], 'bob');
  });

  it('moves the words with the link when a nearer document takes the link over', async () => {
    await put('kb/services/beacon.md', '# Beacon\n\nThe first beacon.');
    await put('kb/services/sub/page.md', '# Page\n\nRing [[beacon|the wobblefrotz]] at noon.');
    await finds('wobblefrotz', ['kb/services/beacon.md', 'kb/services/sub/page.md']);
    // A document of the same name nearer to the link: the link resolves there now.
    await put('kb/services/sub/beacon.md', '# Beacon\n\nThe nearer beacon.');
    await finds('wobblefrotz', ['kb/services/sub/beacon.md', 'kb/services/sub/page.md']);
    // And back when it goes.
    await request(t.baseUrl)
      .delete(idPath('kb/services/sub/beacon.md'))
      .set(as('admin'))
      .expect(200);
    await finds('wobblefrotz', ['kb/services/beacon.md', 'kb/services/sub/page.md']);
  });

  it('follows a link to whatever it names now: a nearer namesake below it, a title moved', async () => {
    await put('kb/services/lamp.md', '# Lamp\n\nThe lamp.');
    await put('kb/services/a/b/page.md', '# Page\n\nLight [[lamp|the glowbrick]].');
    await finds('glowbrick', ['kb/services/a/b/page.md', 'kb/services/lamp.md']);
    // Nearer to the link, in a folder below it: the link means that one now, which the link
    // may not describe (it is not written in its folder), and the first one loses the words.
    await put('kb/services/a/b/c/lamp.md', '# Lamp\n\nA nearer lamp.');
    await finds('glowbrick', ['kb/services/a/b/page.md']);

    const titled = (id: string, title: string, status: number) =>
      request(t.baseUrl)
        .post('/documents')
        .set(as('admin'))
        .send({ document_id: id, title, body: 'Steps.' })
        .expect(status);
    await titled('kb/x/runbook.md', 'Backup runbook', 201);
    await put('kb/x/index.md', '# Index\n\n[[Backup runbook|the vaultkeeper]]');
    await finds('vaultkeeper', ['kb/x/index.md', 'kb/x/runbook.md']);
    await request(t.baseUrl)
      .put(idPath('kb/x/runbook.md'))
      .set(as('admin'))
      .send({ title: 'Restore runbook', body: 'Steps.' })
      .expect(200);
    await finds('vaultkeeper', ['kb/x/index.md']);
    await titled('kb/x/other.md', 'Backup runbook', 201);
    await finds('vaultkeeper', ['kb/x/index.md', 'kb/x/other.md']);
  });

  it('takes the words away when the linking document moves out of the folder', async () => {
    await put('kb/services/m/target.md', '# Target\n\nThe target.');
    await put('kb/services/m/src.md', '# Source\n\nSee [the florpington gateway](target.md).');
    await finds('florpington', ['kb/services/m/src.md', 'kb/services/m/target.md'], 'bob');
    await request(t.baseUrl)
      .post(`${idPath('kb/services/m/src.md')}/move`)
      .set(as('admin'))
      .send({ to: 'secret/src.md' })
      .expect(200);
    // Its link still points at the target, from a folder Bob may not read.
    await finds('florpington', ['secret/src.md']);
    await finds('florpington', [], 'bob');
  });

  it('reads the links of documents the pipeline skips', async () => {
    await put('kb/services/lamp2.md', '# Lamp\n\nAnother lamp.');
    await put('kb/services/skip/src.md', '# Skipped\n\n[the snorkelwhip](../lamp2.md)');
    // The skipped document is not searchable itself; its link's words describe the target.
    await finds('snorkelwhip', ['kb/services/lamp2.md']);
    await request(t.baseUrl)
      .put(idPath('kb/services/skip/src.md'))
      .set(as('admin'))
      .send({ body: '# Skipped\n\nNo link now.' })
      .expect(200);
    await finds('snorkelwhip', []);
  });
});
