import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  announceServer,
  databaseIdentity,
  liveAnnouncement,
  reachableUrl,
  readAnnouncement,
} from './server-announcement';

describe('reachableUrl', () => {
  it.each([
    ['0.0.0.0', 'http://127.0.0.1:8080'],
    ['::', 'http://127.0.0.1:8080'],
    ['127.0.0.1', 'http://127.0.0.1:8080'],
    ['::1', 'http://[::1]:8080'],
    ['192.0.2.10', 'http://192.0.2.10:8080'],
    ['localhost', 'http://localhost:8080'],
  ])('reaches a server on %s at %s', (host, url) => {
    expect(reachableUrl(host, 8080)).toBe(url);
  });
});

describe('databaseIdentity', () => {
  it('names the embedded cluster, and a DATABASE_URL only by a keyed digest', () => {
    expect(databaseIdentity(undefined, 't')).toBe('embedded');
    const url = 'postgres://u:secret@db/kb';
    expect(databaseIdentity(url, 't')).toBe(databaseIdentity(url, 't'));
    expect(databaseIdentity(url, 't')).not.toContain('secret');
    expect(databaseIdentity(url, 't')).not.toBe(databaseIdentity(url, 'u'));
    expect(databaseIdentity(`${url}2`, 't')).not.toBe(databaseIdentity(url, 't'));
  });
});

describe('the announcement in DATA_DIR', () => {
  let dir: string;
  let health: Server;
  let url: string;
  const quiet = { info: () => undefined, warn: jest.fn() };
  const fields = () => ({ url, version: '1.2.3', database: 'embedded', local_token: 'tok' });

  beforeAll(async () => {
    health = createServer((request, response) =>
      response.writeHead(request.url === '/health/live' ? 200 : 404).end(),
    );
    await new Promise<void>((resolve) => health.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(health.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => health.close(resolve)));
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'announce-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is written whole, for its owner only, and read back while the server answers', async () => {
    const withdraw = await announceServer(dir, fields(), quiet);
    const file = join(dir, 'server.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readAnnouncement(dir)).toMatchObject({ ...fields(), pid: process.pid });
    await expect(liveAnnouncement(dir)).resolves.toMatchObject({ pid: process.pid });
    withdraw();
    expect(readAnnouncement(dir)).toBeUndefined();
  });

  it('is not live when its process is gone or its URL does not answer', async () => {
    const stale = { ...fields(), pid: 2 ** 22 + 12345, started_at: '' };
    writeFileSync(join(dir, 'server.json'), JSON.stringify(stale));
    await expect(liveAnnouncement(dir)).resolves.toBeUndefined();
    writeFileSync(
      join(dir, 'server.json'),
      JSON.stringify({ ...stale, pid: process.pid, url: 'http://127.0.0.1:9' }),
    );
    await expect(liveAnnouncement(dir, 300)).resolves.toBeUndefined();
    writeFileSync(join(dir, 'server.json'), '{"pid": 1');
    expect(readAnnouncement(dir)).toBeUndefined();
  });

  it('replaces a stale one, keeps a live one of another server, and withdraws only its own', async () => {
    writeFileSync(
      join(dir, 'server.json'),
      JSON.stringify({ ...fields(), pid: 2 ** 22 + 12345, started_at: '' }),
    );
    const withdraw = await announceServer(dir, fields(), quiet);
    expect(readAnnouncement(dir)?.pid).toBe(process.pid);
    withdraw();

    // PID 1 is alive and its URL answers: another server's announcement stands.
    const other = JSON.stringify({ ...fields(), pid: 1, started_at: '' });
    writeFileSync(join(dir, 'server.json'), other);
    const none = await announceServer(dir, fields(), quiet);
    expect(quiet.warn).toHaveBeenCalledWith(expect.stringContaining('names the server pid 1'));
    none();
    expect(readFileSync(join(dir, 'server.json'), 'utf8')).toBe(other);
  });
});
