import { rmSync } from 'node:fs';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/app';
import { env, META, newDataDir, RawStdio } from './support/mcp-stdio';
import { waitFor } from './support/wait';

type Message = Record<string, unknown> & { params?: Record<string, unknown> };

const QUEUE = 50;
/** Long ids make each notification some 450 bytes: a burst of 1000 is far more than a pipe holds. */
const LONG = 'x'.repeat(400);

/**
 * `agent-data mcp` whose client stops reading its stdout while a thousand followed documents
 * change: what waits in the process stays bounded by MCP_LISTEN_QUEUE, each era's listener
 * is dropped with its own clear end, and the session goes on answering.
 */
describe('a slow reader over stdio', () => {
  let t: TestApp;
  let raw: RawStdio;
  let dataDir: string;
  const updates = (era: 'legacy' | 'modern', prefix: string) =>
    raw.messages.filter((m: Message) => {
      const uri = m.params?.uri;
      if (m.method !== 'notifications/resources/updated' || typeof uri !== 'string') return false;
      return uri.startsWith(prefix) && ('_meta' in m.params! ? 'modern' : 'legacy') === era;
    });

  const dropped = () => raw.stderr.split('fell behind and was dropped').length - 1;
  /** A thousand documents created under `folder` while the client does not read its stdout. */
  const burstUnread = async (folder: string, drops: number) => {
    raw.child.stdout!.pause();
    for (let start = 0; start < 1000; start += 100) {
      const items = Array.from({ length: 100 }, (_, i) => ({
        op: 'create',
        document_id: `${folder}/${LONG}/${start + i}.md`,
        body: 'b',
      }));
      await request(t.baseUrl).post('/documents/bulk').send({ items }).expect(200);
    }
    // The process says so on stderr, which is still read.
    await waitFor(() => dropped() === drops, `${drops} listeners dropped while stdout is unread`);
    raw.child.stdout!.resume();
  };

  beforeAll(async () => {
    t = await startTestApp();
    dataDir = newDataDir();
    raw = new RawStdio([], env(dataDir, { DATABASE_URL: t.db.url, MCP_LISTEN_QUEUE: `${QUEUE}` }));
  });
  afterAll(async () => {
    await raw?.end();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('drops both eras’ listeners with a clear end, forgets the 2025 subscriptions, and still answers', async () => {
    expect(await raw.handshake2025()).toMatchObject({
      result: { capabilities: { logging: {}, resources: { subscribe: true } } },
    });
    raw.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/subscribe',
      params: { uri: 'kb://burst/' },
    });
    expect(await raw.answer(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    raw.send({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: ['kb://burst/'] }, _meta: META },
    });
    await waitFor(
      () => raw.messages.some((m) => m.method === 'notifications/subscriptions/acknowledged'),
      'the acknowledgement',
    );

    await burstUnread('burst', 2);

    const ended = await raw.answer('listen-1');
    expect(ended).toMatchObject({
      jsonrpc: '2.0',
      id: 'listen-1',
      error: { data: { code: 'LISTENER_TOO_SLOW', limit: QUEUE } },
    });
    expect((ended as { error: { message: string } }).error.message).toContain(
      'Listener dropped for falling behind',
    );
    const warning = await waitFor(
      () => raw.messages.find((m) => m.method === 'notifications/message'),
      'the 2025 warning',
    );
    expect(warning).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: {
        level: 'warning',
        logger: 'agent-data',
        data: {
          code: 'LISTENER_TOO_SLOW',
          limit: QUEUE,
          message: expect.stringContaining('subscribe again and re-read what you follow'),
        },
      },
    });
    expect(raw.messages.filter((m) => m.method === 'notifications/message')).toHaveLength(1);
    // What reached the client is what the pipe and the stream's buffer held, plus the queue:
    // far from the thousand changes.
    expect(updates('legacy', 'kb://burst/').length).toBeLessThan(500);
    expect(updates('modern', 'kb://burst/').length).toBeLessThan(500);

    // Still answering; the 2025 subscriptions are forgotten until the client subscribes again.
    raw.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await raw.answer(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    raw.send({
      jsonrpc: '2.0',
      id: 4,
      method: 'resources/subscribe',
      params: { uri: 'kb://after/' },
    });
    expect(await raw.answer(4)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    const before = updates('legacy', 'kb://burst/').length;
    await request(t.baseUrl)
      .post('/documents')
      .send({ document_id: 'burst/late.md', body: 'b' })
      .expect(201);
    await request(t.baseUrl)
      .post('/documents')
      .send({ document_id: 'after/1.md', body: 'b' })
      .expect(201);
    // In commit order: had kb://burst/ still been followed, its update would be here already.
    await waitFor(() => updates('legacy', 'kb://after/').length === 1, 'the update of after/1.md');
    expect(updates('legacy', 'kb://burst/')).toHaveLength(before);
    expect(updates('modern', 'kb://burst/late.md')).toHaveLength(0);
  });

  it('logging/setLevel above warning silences the warning; a bad level is -32602', async () => {
    raw.send({ jsonrpc: '2.0', id: 10, method: 'logging/setLevel', params: { level: 'loud' } });
    expect(await raw.answer(10)).toMatchObject({ error: { code: -32602 } });
    raw.send({ jsonrpc: '2.0', id: 11, method: 'logging/setLevel', params: { level: 'error' } });
    expect(await raw.answer(11)).toEqual({ jsonrpc: '2.0', id: 11, result: {} });

    await burstUnread('after', 3);
    raw.send({ jsonrpc: '2.0', id: 12, method: 'ping' });
    await raw.answer(12);
    // Everything written before the ping's answer has been read: no second warning among it.
    expect(raw.messages.filter((m) => m.method === 'notifications/message')).toHaveLength(1);
  });
});
