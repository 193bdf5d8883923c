import type { Client } from 'pg';
import request from 'supertest';
import { auditOf, tableCounts } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';

const OPS_KEY = 'ops-admin-key-0123456789abcdef';
const ROBOT_KEY = 'robot-admin-key-0123456789abcd';
const READER_KEY = 'reader-key-0123456789abcdef01';
const API_KEYS = `ops:${OPS_KEY}:admin;robot:${ROBOT_KEY}:admin,internal;reader:${READER_KEY}:readonly,internal`;

/** Every admin route, with a body where the route takes one (three items each, for it.each). */
const ROUTES: Array<
  [method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, body?: object]
> = [
  ['get', '/documents', undefined],
  ['get', '/documents/auth/doc.md', undefined],
  ['get', '/documents/auth/doc.md/history', undefined],
  ['post', '/documents', { document_id: 'auth/new.md', body: 'x' }],
  ['put', '/documents/auth/doc.md', { body: 'x' }],
  ['patch', '/documents/auth/doc.md', { old_str: 'a', new_str: 'b' }],
  ['delete', '/documents/auth/doc.md', undefined],
  ['post', '/documents/auth/doc.md/restore', {}],
  ['post', '/documents/auth/doc.md/move', {}],
];

describe('API keys on the admin REST API', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp({ API_KEYS });
    db = await t.db.client();
    await request(t.baseUrl)
      .post('/documents')
      .set('X-API-Key', OPS_KEY)
      .send({ document_id: 'auth/doc.md', body: 'alpha' })
      .expect(201);
  });
  afterAll(() => t.close());

  function call(method: (typeof ROUTES)[number][0], path: string, body?: object) {
    const test = request(t.baseUrl)[method](path);
    return body === undefined ? test : test.send(body);
  }

  it.each(ROUTES)(
    '%s %s without a key → 401 JSON with WWW-Authenticate',
    async (method, path, body) => {
      const before = await tableCounts(db);
      const response = await call(method, path, body).expect(401);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="agent-data"/);
      expect(response.body).toEqual({
        error: {
          code: 'UNAUTHENTICATED',
          message: 'an API key is required (X-API-Key or Authorization: Bearer)',
        },
      });
      expect(await tableCounts(db)).toEqual(before);
    },
  );

  it.each(ROUTES)('%s %s with a wrong key → 401', async (method, path, body) => {
    for (const header of [
      ['X-API-Key', `${OPS_KEY}-wrong`],
      ['Authorization', `Bearer ${OPS_KEY.slice(0, -1)}`],
    ]) {
      const response = await call(method, path, body).set(header[0], header[1]).expect(401);
      expect(response.body.error).toEqual({
        code: 'UNAUTHENTICATED',
        message: 'the API key is not valid',
      });
      expect(response.headers['www-authenticate']).toBeDefined();
      expect(response.text).not.toContain(OPS_KEY.slice(0, 12));
    }
  });

  it.each(ROUTES)(
    '%s %s with a key lacking the admin profile → 403',
    async (method, path, body) => {
      const before = await tableCounts(db);
      const response = await call(method, path, body).set('X-API-Key', READER_KEY).expect(403);
      expect(response.body.error).toEqual({
        code: 'FORBIDDEN',
        message: 'key "reader" does not grant the admin profile',
      });
      expect(response.text).not.toContain(READER_KEY);
      expect(await tableCounts(db)).toEqual(before);
    },
  );

  it('lets an admin key in through X-API-Key and through Authorization: Bearer', async () => {
    const byHeader = await request(t.baseUrl)
      .get('/documents/auth/doc.md')
      .set('X-API-Key', OPS_KEY)
      .expect(200);
    expect(byHeader.body.body).toBe('alpha');
    await request(t.baseUrl)
      .get('/documents')
      .set('Authorization', `Bearer ${ROBOT_KEY}`)
      .expect(200);
    await request(t.baseUrl)
      .get('/documents')
      .set('Authorization', `bearer   ${OPS_KEY}  `)
      .expect(200);
  });

  it('answers 401 before looking at the body of an anonymous request', async () => {
    const before = await tableCounts(db);
    const malformed = await request(t.baseUrl)
      .post('/documents')
      .set('Content-Type', 'application/json')
      .send('{"document_id":');
    expect(malformed.status).toBe(401);
    const wrongType = await request(t.baseUrl)
      .post('/documents')
      .set('Content-Type', 'text/plain')
      .send('hello');
    expect(wrongType.status).toBe(401);
    const oversized = await request(t.baseUrl)
      .post('/documents')
      .set('X-API-Key', 'not-a-key-at-all-000000')
      .send({ document_id: 'auth/huge.md', body: 'x'.repeat(3 * 1024 * 1024) });
    expect(oversized.status).toBe(401);
    expect(await tableCounts(db)).toEqual(before);
  });

  it('records the key name as the actor of every write', async () => {
    await request(t.baseUrl)
      .put('/documents/auth/doc.md')
      .set('Authorization', `Bearer ${ROBOT_KEY}`)
      .send({ body: 'alpha beta' })
      .expect(200);
    await request(t.baseUrl)
      .patch('/documents/auth/doc.md')
      .set('X-API-Key', OPS_KEY)
      .send({ old_str: 'beta', new_str: 'gamma' })
      .expect(200);
    expect(await auditOf(db, 'auth/doc.md')).toEqual([
      { operation: 'create', revision: 1, actor: 'ops' },
      { operation: 'update', revision: 2, actor: 'robot' },
      { operation: 'update', revision: 3, actor: 'ops' },
    ]);
    const { rows } = await db.query(
      `SELECT revision, actor FROM kb_document_snapshots WHERE document_id = 'auth/doc.md' ORDER BY id`,
    );
    expect(rows).toEqual([
      { revision: 1, actor: 'robot' },
      { revision: 2, actor: 'ops' },
    ]);
    const history = await request(t.baseUrl)
      .get('/documents/auth/doc.md/history')
      .set('X-API-Key', OPS_KEY)
      .expect(200);
    expect(history.body.items.map((i: { actor: string }) => i.actor)).toEqual(['ops', 'robot']);
  });

  it('keeps health open to probes without a key', async () => {
    await request(t.baseUrl).get('/health/live').expect(200);
  });
});
