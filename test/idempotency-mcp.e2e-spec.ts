import type { Client } from 'pg';
import request from 'supertest';
import { auditOf } from './documents-helpers';
import { startTestApp, TestApp } from './support/app';
import { type Json, post, rpc } from './support/mcp-http';

const META_KEY = 'io.agentdata/idempotencyKey';

/**
 * MCP write tools with an idempotency key in the call's `_meta` (docs/mcp.md): the same
 * semantics as `Idempotency-Key` on REST, in the same table.
 */
describe('idempotency keys on MCP tool calls', () => {
  let t: TestApp;
  let db: Client;
  let sequence = 0;
  const newKey = () => `mcp-key-${Date.now()}-${++sequence}`;

  /** The JSON-RPC result of one tools/call, `_meta` carrying `key` when given. */
  const call = async (name: string, args: Record<string, unknown>, key?: unknown) => {
    const params = {
      name,
      arguments: args,
      ...(key === undefined ? {} : { _meta: { [META_KEY]: key } }),
    };
    const response = await post(t.baseUrl, '/mcp', rpc('tools/call', params));
    expect(response.status).toBe(200);
    return (response.body as Json).result;
  };
  const errorOf = (result: Json) => {
    expect(result.isError).toBe(true);
    return JSON.parse(result.content[0].text).error;
  };
  const keyRows = async (key: string) =>
    (await db.query(`SELECT state FROM kb_idempotency_keys WHERE key = $1`, [key])).rows;

  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  it('answers a repeated write call with the first result, writing once', async () => {
    const key = newKey();
    const args = { document_id: 'mcp/idem/a.md', content: '# A' };
    const first = await call('upload_document', args, key);
    expect(first.isError).toBeFalsy();
    const again = await call('upload_document', args, key);
    expect(again).toEqual(first);
    expect(await auditOf(db, 'mcp/idem/a.md')).toHaveLength(1);
    // Without the key the same call is a second write, refused: the document exists.
    expect(errorOf(await call('upload_document', args)).code).toBe('ALREADY_EXISTS');
  });

  it('answers a conditional update whose result was lost with that result, not a conflict', async () => {
    await call('upload_document', { document_id: 'mcp/idem/cas.md', content: 'v1' });
    const key = newKey();
    const args = { document_id: 'mcp/idem/cas.md', content: 'v2', expected_revision: 1 };
    const first = await call('update_document', args, key);
    expect(first.structuredContent).toMatchObject({ revision: 2, changed: true });
    expect(await call('update_document', args, key)).toEqual(first);
    expect(errorOf(await call('update_document', args)).code).toBe('REVISION_CONFLICT');
    expect(await auditOf(db, 'mcp/idem/cas.md')).toHaveLength(2);
  });

  it('repeats a refusal, and refuses the key with other arguments', async () => {
    const key = newKey();
    const args = { document_id: 'mcp/idem/later.md' };
    const refused = await call('delete_document', args, key);
    expect(errorOf(refused).code).toBe('NOT_FOUND');
    await call('upload_document', { document_id: 'mcp/idem/later.md', content: 'here now' });
    expect(await call('delete_document', args, key)).toEqual(refused);
    await request(t.baseUrl).get('/documents/mcp/idem/later.md').expect(200);

    const reused = errorOf(await call('delete_document', { document_id: 'mcp/idem/a.md' }, key));
    expect(reused).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', idempotency_key: key });
    expect(reused.hint).toMatch(/key of its own/);
  });

  it('shares the keys of a principal with its REST writes', async () => {
    const key = newKey();
    await request(t.baseUrl)
      .post('/documents')
      .set('Idempotency-Key', key)
      .send({ document_id: 'mcp/idem/rest.md', body: 'r' })
      .expect(201);
    const reused = await call(
      'upload_document',
      { document_id: 'mcp/idem/rest.md', content: 'r' },
      key,
    );
    expect(errorOf(reused).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('refuses a malformed key, and ignores a key on a read-only tool', async () => {
    for (const bad of ['', 'x'.repeat(256), 42, 'é']) {
      const error = errorOf(
        await call('upload_document', { document_id: 'mcp/idem/no.md', content: 'x' }, bad),
      );
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', field: `_meta["${META_KEY}"]` });
    }
    await request(t.baseUrl).get('/documents/mcp/idem/no.md').expect(404);

    const key = newKey();
    const read = await call('get_document', { document_id: 'mcp/idem/a.md' }, key);
    expect(read.isError).toBeFalsy();
    expect(await keyRows(key)).toEqual([]);
  });
});
