import { rmSync } from 'node:fs';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { env, META, newDataDir, RawStdio } from './support/mcp-stdio';
import { waitFor } from './support/wait';

type Message = Record<string, unknown> & { params?: Record<string, unknown> };

/**
 * `agent-data mcp` in-process on a test database, following documents written by a server
 * on the same database: 2025 `resources/subscribe` and 2026 `subscriptions/listen` on the
 * one stdio stream.
 */
describe('change notifications over stdio', () => {
  let t: TestApp;
  let raw: RawStdio;
  let dataDir: string;
  const write = (id: string) =>
    request(t.baseUrl).post('/documents').send({ document_id: id, body: id }).expect(201);
  const updates = (uri: string) =>
    raw.messages.filter(
      (m: Message) => m.method === 'notifications/resources/updated' && m.params?.uri === uri,
    ) as Message[];

  beforeAll(async () => {
    t = await startTestApp();
    dataDir = newDataDir();
    raw = new RawStdio([], env(dataDir, { DATABASE_URL: t.db.url }));
  });
  afterAll(async () => {
    await raw?.end();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('2025-11-25: offers resources/subscribe in initialize, and reports a subscribed document until unsubscribed', async () => {
    expect(await raw.handshake2025()).toMatchObject({
      result: { capabilities: { resources: { subscribe: true, listChanged: false } } },
    });
    raw.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/subscribe',
      params: { uri: 'kb://s/1.md' },
    });
    expect(await raw.answer(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    raw.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'resources/subscribe',
      params: { uri: 'https://x' },
    });
    expect(await raw.answer(3)).toMatchObject({ error: { code: -32602 } });

    await write('s/1.md');
    await waitFor(() => updates('kb://s/1.md').length === 1, 'the update of s/1.md');
    // The 2025 notification as that revision has it: no subscription id.
    expect(updates('kb://s/1.md')[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'kb://s/1.md' },
    });

    raw.send({
      jsonrpc: '2.0',
      id: 4,
      method: 'resources/unsubscribe',
      params: { uri: 'kb://s/1.md' },
    });
    raw.send({
      jsonrpc: '2.0',
      id: 5,
      method: 'resources/subscribe',
      params: { uri: 'kb://s/2.md' },
    });
    await raw.answer(5);
    await request(t.baseUrl).put('/documents/s/1.md').send({ body: 'again' }).expect(200);
    await write('s/2.md');
    // In commit order: had s/1.md still been followed, its update would be here already.
    await waitFor(() => updates('kb://s/2.md').length === 1, 'the update of s/2.md');
    expect(updates('kb://s/1.md')).toHaveLength(1);
  });

  it('2026-07-28: subscriptions/listen on the same stream, stamped with its id, until cancelled', async () => {
    raw.send({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: ['kb://l/'] }, _meta: META },
    });
    const ack = await waitFor(
      () =>
        raw.messages.find(
          (m: Message) => m.method === 'notifications/subscriptions/acknowledged',
        ) as Message | undefined,
      'the acknowledgement',
    );
    expect(ack.params).toEqual({
      notifications: { resourceSubscriptions: ['kb://l/'] },
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
    });
    await write('l/a.md');
    await waitFor(() => updates('kb://l/a.md').length === 1, 'the update of l/a.md');
    expect(updates('kb://l/a.md')[0].params).toEqual({
      uri: 'kb://l/a.md',
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
    });

    raw.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'listen-1' },
    });
    raw.send({
      jsonrpc: '2.0',
      id: 6,
      method: 'resources/subscribe',
      params: { uri: 'kb://s/3.md' },
    });
    await raw.answer(6);
    await write('l/b.md');
    await write('s/3.md');
    await waitFor(() => updates('kb://s/3.md').length === 1, 'the update of s/3.md');
    expect(updates('kb://l/b.md')).toHaveLength(0);
  });
});
