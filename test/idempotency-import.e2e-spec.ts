import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { agentData } from './support/agent-data-cli';
import { startTestApp, type TestApp } from './support/app';

const KEY = 'idem-import-key-2c7e9b4a1d';

/**
 * `agent-data import` sends each bulk request with an idempotency key of its own, kept across
 * its retries: a request whose answer is lost on the way back (the connection cut after the
 * server committed it) is retried and answered from the stored answer, not written twice.
 */
describe('agent-data import over a connection that is cut', () => {
  let t: TestApp;
  let sql: Client;
  let proxy: Server;
  let proxyUrl: string;
  let dir: string;
  const seen: Array<{ path: string; key: string | undefined; cut: boolean }> = [];

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS: `importer:${KEY}:admin` });
    sql = await t.db.client();
    const upstream = new URL(t.baseUrl);
    // Forwards every request; the answer to the first bulk request reaches the server's end
    // whole and is then dropped, the client's connection destroyed.
    proxy = createServer((req, res) => {
      const cut = req.url === '/documents/bulk' && !seen.some((s) => s.cut);
      seen.push({ path: req.url ?? '', key: req.headers['idempotency-key'] as string, cut });
      const out = forward(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          if (cut) {
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'agent-data-idem-import-'));
    mkdirSync(join(dir, 'notes'));
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'notes', `n${i}.md`), `# Note ${i}\n`);
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve));
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('retries the cut bulk request with its key and creates each document once', async () => {
    const run = await agentData(['import', dir, '--prefix', 'imported', '--json'], {
      AGENT_DATA_URL: proxyUrl,
      AGENT_DATA_API_KEY: KEY,
    });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.created).toHaveLength(5);
    expect(report.failed).toEqual([]);

    const bulks = seen.filter((s) => s.path === '/documents/bulk');
    expect(bulks.map((s) => s.cut)).toEqual([true, false]);
    expect(bulks[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(bulks[1].key).toBe(bulks[0].key);
    const { rows } = await sql.query(
      `SELECT count(*) AS audits, count(DISTINCT document_id) AS documents
         FROM kb_audit WHERE document_id LIKE 'imported/%'`,
    );
    expect(rows[0]).toEqual({ audits: '5', documents: '5' });
  });
});
