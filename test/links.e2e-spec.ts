import request from 'supertest';
import { idPath } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import type { Json } from './support/mcp-http';
import { namedKeys } from './support/keys';

const KEYS = {
  admin: 'links-admin-key-0123456789abcdef',
  bob: 'links-bob-key-0123456789abcdef01',
};
const { apiKeys: API_KEYS, as } = namedKeys(KEYS);
/** Bob reads kb/ only: secret/ is outside his grants. */
const POLICY = {
  rules: [
    { who: ['key:admin'], read: '*', write: '*' },
    { who: ['key:bob'], read: ['kb/'], write: ['kb/'] },
  ],
};

const RUNBOOK = [
  '# Database failover',
  '',
  'Promote the replica of [the database](../services/postgres.md), then restart [[api]]',
  'and check [[Cache service]]. Then read kb://kb/runbooks/backup.md.',
  '',
  'Not yet written: [the old notes](../services/gone.md). Planned in [the plan](../../secret/plan.md).',
  '',
  '```sh',
  'cat [not a link](../services/api.md)',
  '```',
].join('\n');

/**
 * Reading links over REST (docs/documents.md, "Links between documents"): a document's links,
 * its backlinks, a folder's broken links and a neighbourhood, resolved against the documents
 * alive now, and only ever what the caller may read.
 */
describe('links over REST', () => {
  let t: TestApp;
  const get = (who: keyof typeof KEYS, path: string, query: Record<string, unknown> = {}) =>
    request(t.baseUrl).get(path).query(query).set(as(who));
  const put = (id: string, body: string) =>
    request(t.baseUrl)
      .post('/documents')
      .set(as('admin'))
      .send({ document_id: id, body })
      .expect(201);

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS, ACCESS_POLICY: JSON.stringify(POLICY) });
    await put('kb/runbooks/db-failover.md', RUNBOOK);
    await put('kb/services/postgres.md', '# PostgreSQL\n\nRunbooks: [[db-failover]].');
    await put('kb/services/api.md', '# API\n\nThe public API.');
    await request(t.baseUrl)
      .post('/documents')
      .set(as('admin'))
      .send({ document_id: 'kb/services/redis.md', title: 'Cache service', body: 'Redis.' })
      .expect(201);
    await put(
      'kb/runbooks/backup.md',
      '# Backup\n\nIf the disk fails: [failover](db-failover.md).',
    );
    await put(
      'secret/plan.md',
      '# Plan\n\nMove [postgres](../kb/services/postgres.md) to new hosts.',
    );
    await put('secret/other.md', '# Other\n\nSee [[postgres]] and [[db-failover]].');
  });
  afterAll(() => t.close());

  it('gives a document’s links in body order, resolved or broken, none from code', async () => {
    const { body } = await get('admin', `${idPath('kb/runbooks/db-failover.md')}/links`).expect(
      200,
    );
    expect(body).toMatchObject({ document_id: 'kb/runbooks/db-failover.md', count: 6, broken: 1 });
    expect(body.links.map((l: Json) => [l.kind, l.target, l.document_id, l.title])).toEqual([
      ['markdown', '../services/postgres.md', 'kb/services/postgres.md', 'PostgreSQL'],
      ['wikilink', 'api', 'kb/services/api.md', 'API'],
      ['wikilink', 'Cache service', 'kb/services/redis.md', 'Cache service'],
      ['uri', 'kb/runbooks/backup.md', 'kb/runbooks/backup.md', 'Backup'],
      ['markdown', '../services/gone.md', null, null],
      ['markdown', '../../secret/plan.md', 'secret/plan.md', 'Plan'],
    ]);
    const first = body.links[0];
    expect(RUNBOOK.slice(first.start, first.end)).toBe('[the database](../services/postgres.md)');
    expect(RUNBOOK.slice(first.target_start, first.target_end)).toBe('../services/postgres.md');
  });

  it('gives the documents linking to one, with the passage that links, a page at a time', async () => {
    const path = `${idPath('kb/services/postgres.md')}/backlinks`;
    const { body } = await get('admin', path).expect(200);
    expect(body.count).toBe(3);
    expect(body.backlinks.map((b: Json) => b.document_id)).toEqual([
      'kb/runbooks/db-failover.md',
      'secret/other.md',
      'secret/plan.md',
    ]);
    expect(body.backlinks[0]).toEqual({
      document_id: 'kb/runbooks/db-failover.md',
      title: 'Database failover',
      links: 1,
      label: 'the database',
      passage:
        'Promote the replica of [the database](../services/postgres.md), then restart [[api]] and check [[Cache service]]. Then read kb://kb/runbooks/backup.md.',
    });
    expect(body.next_cursor).toBeNull();
    const first = await get('admin', path, { limit: 2 }).expect(200);
    expect(first.body.backlinks).toHaveLength(2);
    const second = await get('admin', path, { limit: 2, cursor: first.body.next_cursor }).expect(
      200,
    );
    expect(second.body.backlinks.map((b: Json) => b.document_id)).toEqual(['secret/plan.md']);
    expect(second.body).toMatchObject({ count: 3, next_cursor: null });
  });

  it('gives a folder’s broken links', async () => {
    const { body } = await get('admin', '/documents/links/broken', { prefix: 'kb/' }).expect(200);
    expect(body.items).toEqual([
      {
        document_id: 'kb/runbooks/db-failover.md',
        title: 'Database failover',
        kind: 'markdown',
        target: '../services/gone.md',
        fragment: null,
        label: 'the old notes',
        passage:
          'Not yet written: [the old notes](../services/gone.md). Planned in [the plan](../../secret/plan.md).',
        start: RUNBOOK.indexOf('[the old notes]'),
        end: RUNBOOK.indexOf('. Planned'),
      },
    ]);
    expect(body).toMatchObject({ prefix: 'kb/', next_cursor: null });
  });

  it('resolves a link once its target is created, breaks it while it is deleted', async () => {
    const links = async () =>
      (await get('admin', `${idPath('kb/runbooks/db-failover.md')}/links`).expect(200)).body;
    await put('kb/services/gone.md', '# Gone no more');
    expect((await links()).broken).toBe(0);
    await request(t.baseUrl).delete(idPath('kb/services/api.md')).set(as('admin')).expect(200);
    expect((await links()).links[1]).toMatchObject({ target: 'api', document_id: null });
    const broken = await get('admin', '/documents/links/broken', { prefix: 'kb/' }).expect(200);
    expect(broken.body.items.map((i: Json) => i.target)).toEqual(['api']);
    await request(t.baseUrl)
      .post(`${idPath('kb/services/api.md')}/restore`)
      .set(as('admin'))
      .expect(200);
    expect((await links()).broken).toBe(0);
  });

  it('walks a neighbourhood, nearest first, with the links between its documents', async () => {
    const path = `${idPath('kb/runbooks/db-failover.md')}/neighbourhood`;
    const one = (await get('admin', path).expect(200)).body;
    expect(one.neighbours.map((n: Json) => [n.document_id, n.direction, n.depth])).toEqual([
      ['kb/services/postgres.md', 'links_to', 1],
      ['kb/services/api.md', 'links_to', 1],
      ['kb/services/redis.md', 'links_to', 1],
      ['kb/runbooks/backup.md', 'links_to', 1],
      ['kb/services/gone.md', 'links_to', 1],
      ['secret/plan.md', 'links_to', 1],
      ['secret/other.md', 'linked_from', 1],
    ]);
    expect(one.neighbours[1]).toMatchObject({
      title: 'API',
      from: 'kb/runbooks/db-failover.md',
      label: 'api',
    });
    expect(one.edges).toContainEqual({
      from: 'kb/services/postgres.md',
      to: 'kb/runbooks/db-failover.md',
    });
    const two = (await get('admin', path, { depth: 2 }).expect(200)).body;
    expect(two.neighbours.length).toBe(one.neighbours.length);
    expect(two.edges).toContainEqual({ from: 'secret/other.md', to: 'kb/services/postgres.md' });
    const capped = (await get('admin', path, { depth: 2, limit: 2 }).expect(200)).body;
    expect(capped).toMatchObject({ truncated: true });
    expect(capped.neighbours).toHaveLength(2);
  });

  it('never shows nor counts a document the caller may not read, on any surface', async () => {
    // Links: the one into secret/ reads as broken, exactly as a link to no document.
    const links = (await get('bob', `${idPath('kb/runbooks/db-failover.md')}/links`).expect(200))
      .body;
    expect(links.links[5]).toMatchObject({
      target: '../../secret/plan.md',
      document_id: null,
      title: null,
    });
    expect(links.broken).toBe(1);
    // Backlinks: those from secret/ are neither listed nor counted.
    const backlinks = (
      await get('bob', `${idPath('kb/services/postgres.md')}/backlinks`).expect(200)
    ).body;
    expect(backlinks).toMatchObject({ count: 1, next_cursor: null });
    expect(backlinks.backlinks.map((b: Json) => b.document_id)).toEqual([
      'kb/runbooks/db-failover.md',
    ]);
    // Broken links: the link into secret/ is broken for bob, as if secret/plan.md did not exist.
    const broken = (await get('bob', '/documents/links/broken', { prefix: 'kb/' }).expect(200))
      .body;
    expect(broken.items.map((i: Json) => i.target)).toEqual(['../../secret/plan.md']);
    expect(
      (await get('bob', '/documents/links/broken', { prefix: 'secret/' }).expect(200)).body.items,
    ).toEqual([]);
    // The neighbourhood never names secret/, nor walks through it.
    const walk = (
      await get('bob', `${idPath('kb/runbooks/db-failover.md')}/neighbourhood`, {
        depth: 3,
      }).expect(200)
    ).body;
    const named = [
      ...walk.neighbours.flatMap((n: Json) => [n.document_id, n.from]),
      ...walk.edges.flatMap((e: Json) => [e.from, e.to]),
    ];
    expect(named.filter((id: string) => !id.startsWith('kb/'))).toEqual([]);
    expect(walk.neighbours.length).toBeGreaterThan(4);
    // A document outside the grants answers as an absent one, on every route.
    for (const route of ['links', 'backlinks', 'neighbourhood']) {
      const hidden = await get('bob', `${idPath('secret/plan.md')}/${route}`).expect(404);
      const absent = await get('bob', `${idPath('kb/absent.md')}/${route}`).expect(404);
      expect(hidden.body.error.message.replace('secret/plan.md', '<id>')).toBe(
        absent.body.error.message.replace('kb/absent.md', '<id>'),
      );
    }
  });

  it('takes the nearest of two documents of the same title', async () => {
    await request(t.baseUrl)
      .post('/documents')
      .set(as('admin'))
      .send({ document_id: 'kb/x/notes.md', title: 'Shared', body: 'x' })
      .expect(201);
    await request(t.baseUrl)
      .post('/documents')
      .set(as('admin'))
      .send({ document_id: 'kb/y/notes.md', title: 'Shared', body: 'y' })
      .expect(201);
    await put('kb/y/deep/linker.md', 'To [[Shared]].');
    const { body } = await get('admin', `${idPath('kb/y/deep/linker.md')}/links`).expect(200);
    expect(body.links[0].document_id).toBe('kb/y/notes.md');
    const x = (await get('admin', `${idPath('kb/x/notes.md')}/backlinks`).expect(200)).body;
    const y = (await get('admin', `${idPath('kb/y/notes.md')}/backlinks`).expect(200)).body;
    expect([x.count, y.count]).toEqual([0, 1]);
  });

  it('names the bad parameter, and answers an absent document as absent', async () => {
    const bad = [
      [`${idPath('kb/services/postgres.md')}/backlinks`, { limit: 0 }, 'limit'],
      [`${idPath('kb/services/postgres.md')}/backlinks`, { cursor: '!!' }, 'cursor'],
      [`${idPath('kb/services/postgres.md')}/neighbourhood`, { depth: 4 }, 'depth'],
      [`${idPath('kb/services/postgres.md')}/links`, { extra: 1 }, 'extra'],
      ['/documents/links/broken', { limit: 501 }, 'limit'],
    ] as const;
    for (const [path, query, field] of bad) {
      const { body } = await get('admin', path, query).expect(400);
      expect(body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field });
    }
    await get('admin', `${idPath('kb/nothing.md')}/links`).expect(404);
    // A document whose id ends in /links is read with that slash encoded.
    await put('kb/odd/links', 'odd');
    await get('admin', '/documents/kb/odd%2Flinks').expect(200);
    expect((await get('admin', '/documents/kb/odd/links').expect(404)).body.error.code).toBe(
      'NOT_FOUND',
    );
  });
});
