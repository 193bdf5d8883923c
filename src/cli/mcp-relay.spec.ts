import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpRelay } from './mcp-relay';

/** Events the server streams: some 20 MB, far more than the kernel's socket buffers hold. */
const EVENTS = 20_000;
const PADDING = 'x'.repeat(1000);

/**
 * A stream relayed while its reader cannot take more: the relay stops reading the answer
 * until told to go on, so the server, not the relaying process, holds what waits (and the
 * server bounds it).
 */
describe('McpRelay, a stream whose reader falls behind', () => {
  let server: Server;
  let url: URL;
  let written = 0;
  let finished = false;

  beforeAll(async () => {
    server = createServer((_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const more = () => {
        while (written < EVENTS) {
          const message = {
            jsonrpc: '2.0',
            method: 'notifications/resources/updated',
            params: { uri: `kb://burst/${written}.md`, padding: PADDING },
          };
          written++;
          if (!res.write(`data: ${JSON.stringify(message)}\n\n`))
            return void res.once('drain', more);
        }
        finished = true;
        res.end();
      };
      more();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads no more of the answer while a delivery waits, and all of it after', async () => {
    const relay = new McpRelay();
    let delivered = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answer = relay.post(url, '{}', {}, new AbortController().signal, () => {
      delivered++;
      // The first message finds stdout full: nothing more until it drains.
      return delivered === 1 ? held : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // What came in the chunk being read, not the stream: the rest waits in the server.
    expect(delivered).toBeLessThan(200);
    expect(finished).toBe(false);
    expect(written).toBeLessThan(EVENTS);

    release();
    await answer;
    expect(delivered).toBe(EVENTS);
    relay.close();
  });
});
