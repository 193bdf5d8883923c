import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { download, partialFile } from './hub-download';

jest.mock('node:fs', () => {
  const actual = jest.requireActual<typeof import('node:fs')>('node:fs');
  return {
    ...actual,
    openSync: jest.fn(actual.openSync),
    writeSync: jest.fn(actual.writeSync),
    closeSync: jest.fn(actual.closeSync),
  };
});
const mocked = fs as jest.Mocked<typeof fs>;

/** A disk that fails under a download: named as the disk's failure, not as a cut transfer. */
describe('a download onto a disk that cannot take it', () => {
  const data = randomBytes(100_000);
  let server: Server;
  let url: URL;
  let dir: string;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(data.length) });
      res.end(data);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/model.onnx`);
    dir = fs.mkdtempSync(join(tmpdir(), 'agent-data-hub-download-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => jest.clearAllMocks());

  it('says the part file cannot be written (a full disk), and closes it', async () => {
    const part = partialFile(join(dir, 'full'));
    // The first chunk fits, the disk is full at the second.
    mocked.writeSync.mockImplementationOnce(
      (_fd: number, buffer: unknown) => (buffer as NodeJS.ArrayBufferView).byteLength,
    );
    mocked.writeSync.mockImplementationOnce(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    await expect(
      download(url, { size: data.length }, part, { baseUrl: url.origin, timeoutMs: 5000 }),
    ).rejects.toThrow(`${part.path} cannot be written: ENOSPC: no space left on device, write`);
    expect(mocked.writeSync).toHaveBeenCalledTimes(2);
    expect(mocked.closeSync).toHaveBeenCalledTimes(1);
  });

  it('says so when the part file cannot even be opened', async () => {
    const part = partialFile(join(dir, 'folder'));
    mocked.openSync.mockImplementationOnce(() => {
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, open`), {
        code: 'EISDIR',
      });
    });
    await expect(
      download(url, { size: data.length }, part, { baseUrl: url.origin, timeoutMs: 5000 }),
    ).rejects.toThrow(`${part.path} cannot be written: EISDIR`);
  });
});
