import type { Client } from 'pg';
import request from 'supertest';
import { ChangeFeedRepository, type ChangeFilter } from '../src/documents/change-feed.repository';
import { analyzedPlan, rowsRead } from './support/explain';
import { startTestApp, TestApp } from './support/app';
import { expectInvalidParameter, idPath } from './documents-helpers';

const KEYS = { alice: 'alice-feed-key-0123456789abc', bob: 'bob-feed-key-0123456789abcde' };
const as = (who: keyof typeof KEYS) => ({ 'X-API-Key': KEYS[who] });

type Change = {
  id: number;
  operation: string;
  document_id: string;
  revision: number | null;
  actor: string;
  at: string;
};
type Feed = { changes: Change[]; next_cursor: string | null };

/**
 * The change feed (`GET /documents/changes`, docs/documents.md): the audit trail newest
 * first by id, its filters, keyset pages that neither repeat nor skip a row while writes go
 * on, its refusals of bad input, and its plans over 100 000 rows. What an access policy
 * hides from it is in access-control.e2e-spec.ts.
 */
describe('change feed', () => {
  let t: TestApp;
  let db: Client;

  const feed = async (query: Record<string, string | number>, who: keyof typeof KEYS = 'alice') =>
    (await request(t.baseUrl).get('/documents/changes').query(query).set(as(who)).expect(200))
      .body as Feed;
  const write = (who: keyof typeof KEYS) => request(t.baseUrl).post('/documents').set(as(who));
  /** The rows of the whole feed under `query`, page after page of `limit`. */
  const walk = async (
    query: Record<string, string>,
    limit: number,
    betweenPages: () => Promise<unknown> = async () => undefined,
  ) => {
    const seen: Change[] = [];
    let cursor: string | null = null;
    do {
      const page = await feed({ ...query, limit, ...(cursor === null ? {} : { cursor }) });
      expect(page.changes.length).toBeLessThanOrEqual(limit);
      seen.push(...page.changes);
      cursor = page.next_cursor;
      await betweenPages();
    } while (cursor !== null);
    return seen;
  };

  beforeAll(async () => {
    t = await startTestApp({
      API_KEYS: Object.entries(KEYS)
        .map(([name, key]) => `${name}:${key}:admin`)
        .join(';'),
    });
    db = await t.db.client();
  });
  afterAll(() => t.close());

  it('shows every write, newest first: operation, current id, revision, actor, time', async () => {
    const before = Date.now();
    await write('alice').send({ document_id: 'life/a.md', body: 'one' }).expect(201);
    await request(t.baseUrl)
      .put(idPath('life/a.md'))
      .set(as('alice'))
      .send({ body: 'two' })
      .expect(200);
    await request(t.baseUrl)
      .patch(idPath('life/a.md'))
      .set(as('alice'))
      .send({ old_str: 'two', new_str: 'three' })
      .expect(200);
    await request(t.baseUrl).delete(idPath('life/a.md')).set(as('alice')).expect(200);
    await request(t.baseUrl)
      .post(`${idPath('life/a.md')}/restore`)
      .set(as('alice'))
      .expect(200);
    await request(t.baseUrl)
      .post(`${idPath('life/a.md')}/move`)
      .set(as('alice'))
      .send({ to: 'life/b.md' })
      .expect(200);
    await write('bob').send({ document_id: 'life/c.md', body: 'bob' }).expect(201);

    const { changes, next_cursor } = await feed({ folder: 'life' });
    expect(next_cursor).toBeNull();
    expect(changes.map((c) => [c.operation, c.document_id, c.revision, c.actor])).toEqual([
      ['create', 'life/c.md', 1, 'bob'],
      ['move', 'life/b.md', 5, 'alice'],
      ['moved-away', 'life/a.md', 5, 'alice'],
      // A move takes the document's earlier rows to its new id.
      ['restore', 'life/b.md', 5, 'alice'],
      ['delete', 'life/b.md', 4, 'alice'],
      ['update', 'life/b.md', 3, 'alice'],
      ['update', 'life/b.md', 2, 'alice'],
      ['create', 'life/b.md', 1, 'alice'],
    ]);
    const ids = changes.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    for (const change of changes) {
      expect(Object.keys(change)).toEqual([
        'id',
        'operation',
        'document_id',
        'revision',
        'actor',
        'at',
      ]);
      expect(change.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(change.at)).toBeGreaterThanOrEqual(before - 1000);
    }
  });

  it('filters by folder (whole segments), actor and operation', async () => {
    for (const id of ['seg/team-a/x.md', 'seg/team-a/deep/y.md', 'seg/team-ab/z.md']) {
      await write('alice').send({ document_id: id, body: id }).expect(201);
    }
    await write('bob').send({ document_id: 'seg/team-a/bob.md', body: 'b' }).expect(201);
    await request(t.baseUrl).delete(idPath('seg/team-ab/z.md')).set(as('bob')).expect(200);

    const ids = (page: Feed) => page.changes.map((c) => `${c.operation} ${c.document_id}`);
    for (const folder of ['seg/team-a', 'seg/team-a/']) {
      expect(ids(await feed({ folder }))).toEqual([
        'create seg/team-a/bob.md',
        'create seg/team-a/deep/y.md',
        'create seg/team-a/x.md',
      ]);
    }
    expect(ids(await feed({ folder: 'seg/team-a/deep' }))).toEqual(['create seg/team-a/deep/y.md']);
    expect(ids(await feed({ folder: 'seg', actor: 'bob' }))).toEqual([
      'delete seg/team-ab/z.md',
      'create seg/team-a/bob.md',
    ]);
    expect(ids(await feed({ folder: 'seg', operation: 'delete' }))).toEqual([
      'delete seg/team-ab/z.md',
    ]);
    expect(ids(await feed({ folder: 'life', operation: 'moved-away' }))).toEqual([
      'moved-away life/a.md',
    ]);
    expect(ids(await feed({ actor: 'nobody' }))).toEqual([]);
    expect(ids(await feed({ folder: 'seg/team' }))).toEqual([]);
    // An empty filter is no filter.
    expect((await feed({ folder: '', actor: '', operation: '', since: '' })).changes).toHaveLength(
      (await feed({})).changes.length,
    );
  });

  it('filters by time: since inclusive, until exclusive, to the microsecond, any offset', async () => {
    await db.query(
      `INSERT INTO kb_audit (operation, document_id, revision, actor, at)
       SELECT 'update', 'clock/m' || i || '.md', 1, 'clock',
              '2026-01-01T00:00:00Z'::timestamptz + i * interval '1 minute'
         FROM generate_series(0, 9) AS i`,
    );
    const minutes = async (query: Record<string, string>) =>
      (await feed({ actor: 'clock', ...query })).changes.map((c) => c.document_id);
    expect(await minutes({ since: '2026-01-01T00:03:00Z', until: '2026-01-01T00:06:00Z' })).toEqual(
      ['clock/m5.md', 'clock/m4.md', 'clock/m3.md'],
    );
    expect(
      await minutes({ since: '2026-01-01T01:03:00+01:00', until: '2025-12-31T19:06-05:00' }),
    ).toEqual(['clock/m5.md', 'clock/m4.md', 'clock/m3.md']);
    expect(
      await minutes({ since: '2026-01-01T00:03:00Z', until: '2026-01-01T00:03:00.000001Z' }),
    ).toEqual(['clock/m3.md']);
    expect(await minutes({ since: '2026-01-01T00:03:00.000001Z' })).toHaveLength(6);
    expect(await minutes({ until: '2026-01-01T00:00:00.000001Z' })).toEqual(['clock/m0.md']);
    expect(await minutes({ since: '2026-01-01T00:10:00Z' })).toEqual([]);
    const [{ at }] = (await feed({ actor: 'clock', limit: 1 })).changes;
    expect(at).toBe('2026-01-01T00:09:00.000Z');
  });

  describe('paging', () => {
    const bulk = (prefix: string, count: number, from = 0) =>
      request(t.baseUrl)
        .post('/documents/bulk')
        .set(as('alice'))
        .send({
          items: Array.from({ length: count }, (_, i) => ({
            op: 'create',
            document_id: `${prefix}/d${from + i}.md`,
            body: `document ${from + i}`,
          })),
        })
        .expect(200);
    /** The ids of the audit rows at or below `top`, newest first, as the database holds them. */
    const auditIds = async (top: number, folder?: string) => {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM kb_audit WHERE id <= $1 AND ($2::text IS NULL OR document_id LIKE $2 || '/%')
          ORDER BY id DESC`,
        [top, folder ?? null],
      );
      return rows.map((row) => Number(row.id));
    };

    let arrivals = 0;

    beforeAll(async () => {
      await bulk('paging', 300);
    });

    it.each([
      ['a folder', { folder: 'paging' }, 37],
      ['the whole feed', {}, 50],
    ])(
      '%s: every row once, in order, while writes arrive between the pages',
      async (_label, query: Record<string, string>, limit) => {
        const [{ id: top }] = (await feed({ ...query, limit: 1 })).changes;
        let written = 0;
        const seen = await walk(query, limit, async () => {
          // New rows land above the first page: a keyset page never sees them.
          await bulk('paging/new', 3, arrivals);
          arrivals += 3;
          written += 3;
        });
        const ids = seen.map((c) => c.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toEqual(await auditIds(top, query.folder));
        expect(ids.length).toBeGreaterThanOrEqual(300);
        expect(written).toBeGreaterThan(0);
      },
    );

    it('gives up to 500 rows a page, and the last page has no cursor', async () => {
      await bulk('paging/more', 200);
      const page = await feed({ folder: 'paging', limit: 500 });
      expect(page.changes).toHaveLength(500);
      expect(page.next_cursor).not.toBeNull();
      const rest = await feed({ folder: 'paging', limit: 500, cursor: page.next_cursor! });
      expect(rest.next_cursor).toBeNull();
      expect(rest.changes[0].id).toBeLessThan(page.changes[499].id);
      const exact = await feed({ folder: 'life', limit: 8 });
      expect(exact.changes).toHaveLength(8);
      expect(exact.next_cursor).toBeNull();
    });
  });

  describe('bad input: 400 INVALID_ARGUMENT naming the parameter', () => {
    it.each([
      ['an unknown parameter', 'colour=red', 'colour'],
      ['a parameter given twice', 'folder=a&folder=b', 'folder'],
      ['a folder with an empty segment', 'folder=a//b', 'folder'],
      ['a folder with ..', 'folder=a/../b', 'folder'],
      ['a folder of a slash alone', 'folder=/', 'folder'],
      ['an actor with a control character', 'actor=a%00b', 'actor'],
      ['an operation that is not one', 'operation=Update%3B', 'operation'],
      ['an operation no write is audited as', 'operation=drop', 'operation'],
      ['a time that is not one', 'since=yesterday', 'since'],
      ['a day that does not exist', 'since=2026-02-30T00:00:00Z', 'since'],
      ['a time without its offset', 'until=2026-01-01T00:00:00', 'until'],
      [
        'until equal to since',
        'since=2026-01-01T00:00:00Z&until=2026-01-01T01:00:00%2B01:00',
        'until',
      ],
      ['until before since', 'since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
      ['a limit of 0', 'limit=0', 'limit'],
      ['a limit over 500', 'limit=501', 'limit'],
      ['a limit that is not a number', 'limit=ten', 'limit'],
      ['a cursor that is not one', 'cursor=garbage!', 'cursor'],
      ['a cursor made up', `cursor=${Buffer.from('a1.0').toString('base64url')}`, 'cursor'],
      [
        'a cursor too large',
        `cursor=${Buffer.from('a1.9999999999999999999').toString('base64url')}`,
        'cursor',
      ],
      [
        'a cursor of another listing',
        `cursor=k1.${Buffer.from('a.md').toString('base64url')}`,
        'cursor',
      ],
    ])('%s (%s)', async (_label, query, field) => {
      await expectInvalidParameter(t, `/documents/changes?${query}`, field, as('alice'));
    });

    it('takes a cursor back only as it was given', async () => {
      const { next_cursor } = await feed({ limit: 1 });
      await request(t.baseUrl)
        .get('/documents/changes')
        .query({ cursor: `${next_cursor}A` })
        .set(as('alice'))
        .expect(400);
    });
  });

  describe('over 100 000 audit rows', () => {
    let repository: ChangeFeedRepository;
    let middle: string;
    const filter = (overrides: Partial<ChangeFilter>): ChangeFilter => ({
      from: null,
      to: null,
      actor: null,
      operation: null,
      since: null,
      until: null,
      before: null,
      ...overrides,
    });
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

    beforeAll(async () => {
      repository = t.app.get(ChangeFeedRepository);
      // A folder imported long ago and never written since: its rows have the oldest ids.
      await db.query(
        `INSERT INTO kb_audit (operation, document_id, revision, actor, at)
         SELECT 'create', 'archive/2024/doc-' || i || '.md', 1, 'importer',
                now() - interval '200 days' + i * interval '1 second'
           FROM generate_series(1, 700) AS i`,
      );
      // And a large one, written long ago too: the newest rows hold none of it.
      await db.query(
        `INSERT INTO kb_audit (operation, document_id, revision, actor, at)
         SELECT 'create', 'archive/2023/doc-' || i || '.md', 1, 'importer',
                now() - interval '300 days' + i * interval '1 second'
           FROM generate_series(1, 5000) AS i`,
      );
      // 20 folders of 7 subfolders, five actors, a write a minute for 70 days; then a few
      // refused attempts by a rare actor, long ago.
      await db.query(
        `INSERT INTO kb_audit (operation, document_id, revision, actor, at)
         SELECT (ARRAY['create', 'update', 'update', 'update', 'delete', 'restore'])[1 + i % 6],
                'f' || (i % 20) || '/s' || (i % 7) || '/doc-' || (i % 5000) || '.md', 1,
                'actor' || (i % 5), now() - (100000 - i) * interval '1 minute'
           FROM generate_series(1, 100000) AS i`,
      );
      await db.query(
        `INSERT INTO kb_audit (operation, document_id, revision, actor, at)
         SELECT 'refused:patch', 'f1/s1/doc-' || i || '.md', NULL, 'rare',
                now() - 100000 * interval '1 minute' + i * interval '1 hour'
           FROM generate_series(1, 60) AS i`,
      );
      await db.query('ANALYZE kb_audit');
      const { rows } = await db.query(`SELECT ((min(id) + max(id)) / 2)::text AS id FROM kb_audit`);
      middle = rows[0].id;
    }, 60_000);

    it.each([
      ['a narrow folder', 'kb_audit_document', 1000, { from: 'f3/s2/', to: 'f3/s20' }],
      [
        'a narrow folder, a deep page',
        'kb_audit_document',
        1000,
        { from: 'f3/s2/', to: 'f3/s20', before: 'middle' },
      ],
      [
        'a narrow folder written long ago',
        'kb_audit_document',
        1000,
        { from: 'archive/2024/', to: 'archive/20240' },
      ],
      // A twentieth of the rows (5 000): the newest first, through the primary key.
      ['a wide folder', 'kb_audit_pkey', 2000, { from: 'f3/', to: 'f30' }],
      [
        'a wide folder, a deep page',
        'kb_audit_pkey',
        2000,
        { from: 'f3/', to: 'f30', before: 'middle' },
      ],
      // 5 000 rows among the oldest: once 10 000 of the newest rows held no page of it (the walk
      // that chose this statement), the folder read whole and sorted.
      [
        'a wide folder written long ago',
        'kb_audit_document',
        5_000,
        { from: 'archive/2023/', to: 'archive/20230' },
      ],
      ['an hour a month ago', 'kb_audit_at', 100, { since: daysAgo(30.04), until: daysAgo(30) }],
      // Either the window (1 440 rows) or, when the planner reckons the window's rows spread
      // evenly over the ids, the newer rows down to it (43 200): never the older ones.
      [
        'a day a month ago',
        'kb_audit_at|kb_audit_pkey',
        45_000,
        { since: daysAgo(31), until: daysAgo(30) },
      ],
      [
        'since two months ago, a deep page',
        'kb_audit_pkey',
        100,
        { since: daysAgo(60), before: 'middle' },
      ],
      ['a rare actor', 'kb_audit_actor', 100, { actor: 'rare' }],
      ['a rare operation', 'kb_audit_operation', 100, { operation: 'refused:patch' }],
      ['no filter, a deep page', 'kb_audit_pkey', 100, { before: 'middle' }],
    ])(
      '%s: a page of 51 reads %s, at most %d rows, never the whole table',
      async (_label, index, most, overrides: Partial<ChangeFilter>) => {
        const query = filter({
          ...overrides,
          before: overrides.before === 'middle' ? middle : null,
        });
        const [sql, params] = await repository.pageQueryForExplain(query, 51);
        const nodes = await analyzedPlan(db, sql, params);
        expect(nodes.map((node) => node['Node Type'])).not.toContain('Seq Scan');
        const used = nodes.map((node) => node['Index Name']).filter((name) => name !== undefined);
        expect(used.some((name) => index.split('|').includes(name))).toBe(true);
        expect(await rowsRead(db, sql, params)).toBeLessThanOrEqual(most);
      },
    );
  });
});
