import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { isDatabaseUnavailable } from '../database/database-errors';
import { McpHttpException } from './json-rpc-error';
import { readMcpBody } from './mcp-body';

/** A request-like stream with a JSON content type, cut by its connection after `sent`. */
function aCutRequest(sent: string): IncomingMessage {
  const stream = new PassThrough();
  const request = Object.assign(stream, {
    headers: { 'content-type': 'application/json' },
  }) as unknown as IncomingMessage;
  setImmediate(() => {
    stream.write(sent);
    stream.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
  });
  return request;
}

describe('readMcpBody', () => {
  it('answers a body cut by its connection with a 400 envelope, not as an outage', async () => {
    const refused = await readMcpBody(aCutRequest('{"jsonrpc":"2.0",'), 1000).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(McpHttpException);
    expect((refused as McpHttpException).getStatus()).toBe(400);
    expect((refused as Error).message).toBe(
      'Bad Request: the request body could not be read to its end (aborted)',
    );
    expect(isDatabaseUnavailable(refused)).toBe(false);
  });
});
