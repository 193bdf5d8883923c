import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { listeningClient, openListeners, RawListen } from './support/mcp-listen';
import { modernPost } from './support/mcp-modern';
import { waitFor } from './support/wait';

const ADMIN = 'admin-key-0123456789abcdef01';
const BOB = 'bob-key-0123456789abcdef0123';
const API_KEYS = `admin:${ADMIN}:admin,internal;bob:${BOB}:admin,internal,readonly`;
/** The revision's promise, as this server keeps it: a committed write reaches listeners within 1 s. */
const WITHIN_MS = 1000;

/**
 * `subscriptions/listen` (2026-07-28) on the HTTP endpoint, against two replicas on one
 * database: the listener is on `t`, the writes mostly go through `other`.
 */
describe('change notifications over HTTP (subscriptions/listen)', () => {
  let t: TestApp;
  let other: TestApp;
  let dir: string;
  let policyFile: string;
  const setPolicy = (bobReads: string[]) =>
    writeFileSync(
      policyFile,
      JSON.stringify({
        rules: [
          { who: ['key:admin'], read: '*', write: '*' },
          { who: ['key:bob'], read: bobReads },
        ],
      }),
    );
  /** Creates `id`, or updates it when it exists, as the admin through `app`. */
  const write = async (app: TestApp, id: string, body = `text of ${id}`) => {
    const created = await request(app.baseUrl)
      .post('/documents')
      .set('X-API-Key', ADMIN)
      .send({ document_id: id, body });
    if (created.status === 201) return;
    expect(created.status).toBe(409);
    await request(app.baseUrl)
      .put(`/documents/${id}`)
      .set('X-API-Key', ADMIN)
      .send({ body })
      .expect(200);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-listen-'));
    policyFile = join(dir, 'policy.json');
    setPolicy(['b/']);
    const env = {
      API_KEYS,
      ACCESS_POLICY_FILE: policyFile,
      MCP_LISTENERS_PER_PRINCIPAL: '3',
      MCP_LISTEN_QUEUE: '50',
    };
    t = await startTestApp(env);
    other = await startTestApp(env, t.db);
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens with the acknowledgement of the honoured filter, as an SSE stream that proxies do not buffer', async () => {
    const raw = await RawListen.open(t.baseUrl, ADMIN, {
      resourcesListChanged: true,
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ['kb://a/1.md', 'kb://b/', 'https://example.com/x', 'kb://a/../x'],
    });
    try {
      expect(raw.response.statusCode).toBe(200);
      expect(raw.response.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(raw.response.headers['x-accel-buffering']).toBe('no');
      expect(await raw.next(0, 'the acknowledgement')).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          notifications: {
            resourcesListChanged: true,
            resourceSubscriptions: ['kb://a/1.md', 'kb://b/'],
          },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'raw-1' },
        },
      });
      // Every later message carries the subscription's id too.
      await write(other, 'b/stamped.md');
      const next = await raw.next(1);
      expect(next).toMatchObject({
        method: 'notifications/resources/updated',
        params: {
          uri: 'kb://b/stamped.md',
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'raw-1' },
        },
      });
    } finally {
      raw.close();
    }
  });

  it('server/discover says what is honoured: resources, not tools or prompts', async () => {
    const discover = await modernPost(
      t.baseUrl,
      '/mcp',
      'server/discover',
      {},
      {
        headers: { 'X-API-Key': ADMIN },
      },
    );
    expect(discover.body.result.capabilities).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      tools: { listChanged: false },
      prompts: { listChanged: false },
    });
  });

  it("brings another replica's writes, deletes and moves to the SDK client's listen within a second", async () => {
    const { client, heard } = await listeningClient(t.baseUrl, { 'X-API-Key': ADMIN });
    try {
      const subscription = await client.listen({
        resourceSubscriptions: ['kb://a/1.md', 'kb://b/'],
        resourcesListChanged: true,
      });
      expect(subscription.honoredFilter).toEqual({
        resourceSubscriptions: ['kb://a/1.md', 'kb://b/'],
        resourcesListChanged: true,
      });

      await write(other, 'a/1.md');
      await waitFor(
        () => heard.includes('updated kb://a/1.md') && heard.includes('list_changed'),
        'the creation of a/1.md',
        WITHIN_MS,
      );
      heard.length = 0;

      await write(other, 'a/1.md', 'changed');
      await waitFor(() => heard.includes('updated kb://a/1.md'), 'its update', WITHIN_MS);
      // An update adds nothing to a listing.
      expect(heard).toEqual(['updated kb://a/1.md']);
      heard.length = 0;

      // Not followed: only the listing changed.
      await write(other, 'c/unfollowed.md');
      await waitFor(() => heard.includes('list_changed'), 'a list change', WITHIN_MS);
      expect(heard).toEqual(['list_changed']);
      heard.length = 0;

      await request(other.baseUrl).delete('/documents/a/1.md').set('X-API-Key', ADMIN).expect(200);
      await waitFor(
        () => heard.includes('updated kb://a/1.md') && heard.includes('list_changed'),
        'its deletion',
        WITHIN_MS,
      );
      heard.length = 0;

      // A move is both ids: the folder followed hears its new document.
      await write(other, 'c/moving.md');
      await request(other.baseUrl)
        .post('/documents/c/moving.md/move')
        .set('X-API-Key', ADMIN)
        .send({ to: 'b/moved.md' })
        .expect(200);
      await waitFor(() => heard.includes('updated kb://b/moved.md'), 'the move', WITHIN_MS);
      expect(heard).not.toContain('updated kb://c/moving.md');
    } finally {
      await client.close();
    }
  });

  it('never tells a principal of a document outside its grants, and applies a policy read again from the next change', async () => {
    const { client, heard } = await listeningClient(t.baseUrl, { 'X-API-Key': BOB });
    try {
      await client.listen({
        resourceSubscriptions: ['kb://a/secret.md', 'kb://b/', 'kb://c/'],
        resourcesListChanged: true,
      });
      await write(other, 'a/secret.md');
      await write(other, 'c/before.md');
      await write(other, 'b/visible.md');
      // Per listener, notifications keep commit order: had the first two reached bob, they
      // would be here before this one.
      await waitFor(() => heard.includes('updated kb://b/visible.md'), 'b/visible.md', WITHIN_MS);
      expect(heard).toEqual(['updated kb://b/visible.md', 'list_changed']);
      heard.length = 0;

      setPolicy(['b/', 'c/']);
      await waitFor(
        async () =>
          (await request(t.baseUrl).get('/documents/c/before.md').set('X-API-Key', BOB)).status ===
          200,
        'the policy read again',
      );
      await write(other, 'c/after.md');
      await waitFor(() => heard.includes('updated kb://c/after.md'), 'c/after.md', WITHIN_MS);
      expect(heard).toEqual(['updated kb://c/after.md', 'list_changed']);
    } finally {
      setPolicy(['b/']);
      await client.close();
    }
  });

  it('bounds listeners per principal, and a closed stream frees its place', async () => {
    const before = await openListeners(t.baseUrl, ADMIN);
    const streams = await Promise.all(
      [1, 2, 3].map((n) => RawListen.open(t.baseUrl, BOB, { resourcesListChanged: true }, n)),
    );
    try {
      await Promise.all(streams.map((s) => s.next(0, 'an acknowledgement')));
      expect(await openListeners(t.baseUrl, ADMIN)).toBe(before + 3);

      const refused = await modernPost(
        t.baseUrl,
        '/mcp',
        'subscriptions/listen',
        { notifications: { resourcesListChanged: true } },
        { headers: { 'X-API-Key': BOB } },
      );
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toContain('MCP_LISTENERS_PER_PRINCIPAL');
      expect(refused.body.error.data).toEqual({ code: 'TOO_MANY_LISTENERS', limit: 3 });

      streams[0].close();
      await waitFor(
        async () => (await openListeners(t.baseUrl, ADMIN)) === before + 2,
        'the closed stream to be counted out',
      );
      const { client } = await listeningClient(t.baseUrl, { 'X-API-Key': BOB });
      try {
        await client.listen({ resourcesListChanged: true });
        expect(await openListeners(t.baseUrl, ADMIN)).toBe(before + 3);
      } finally {
        await client.close();
      }
    } finally {
      for (const stream of streams) stream.close();
    }
    await waitFor(
      async () => (await openListeners(t.baseUrl, ADMIN)) === before,
      'every listener to be counted out',
    );
  });

  it('refuses a filter of more than 1000 URIs, naming the limit', async () => {
    const uris = Array.from({ length: 1001 }, (_, i) => `kb://many/${i}.md`);
    const refused = await modernPost(
      t.baseUrl,
      '/mcp',
      'subscriptions/listen',
      { notifications: { resourceSubscriptions: uris } },
      { headers: { 'X-API-Key': ADMIN } },
    );
    expect(refused.body.error.code).toBe(-32602);
    expect(refused.body.error.message).toContain('over the limit of 1000');
  });

  it('a reader that stops reading during a burst of 1000 writes gets them all or a final message saying it fell behind, never a growing queue', async () => {
    const before = await openListeners(t.baseUrl, ADMIN);
    const raw = await RawListen.open(t.baseUrl, ADMIN, { resourceSubscriptions: ['kb://burst/'] });
    try {
      await raw.next(0, 'the acknowledgement');
      raw.pause();
      // Long ids make each notification some 500 bytes: half a megabyte in all.
      const folder = `burst/${'x'.repeat(400)}`;
      for (let start = 0; start < 1000; start += 100) {
        const items = Array.from({ length: 100 }, (_, i) => ({
          op: 'create',
          document_id: `${folder}/${start + i}.md`,
          body: 'b',
        }));
        await request(other.baseUrl)
          .post('/documents/bulk')
          .set('X-API-Key', ADMIN)
          .send({ items })
          .expect(200);
      }
      raw.resume();
      const last = await waitFor(
        () =>
          raw.events.length === 1001
            ? 'all'
            : raw.ended && raw.events.length > 0
              ? raw.events[raw.events.length - 1]
              : undefined,
        'all 1000 notifications or the end of the stream',
      );
      if (last === 'all') {
        expect(
          new Set(raw.events.slice(1).map((e) => (e.params as { uri: string }).uri)).size,
        ).toBe(1000);
      } else {
        expect(last).toMatchObject({
          id: 'raw-1',
          error: { data: { code: 'LISTENER_TOO_SLOW', limit: 50 } },
        });
        expect((last as { error: { message: string } }).error.message).toContain('falling behind');
        // Never more than the queue's worth beyond what the socket held: it did not grow.
        await waitFor(
          async () => (await openListeners(t.baseUrl, ADMIN)) === before,
          'the dropped listener to be counted out',
        );
      }
    } finally {
      raw.close();
    }
  });
});
