import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { idPath, insertIds } from './documents-helpers';
import { agentData } from './support/agent-data-cli';
import { startTestApp, TestApp } from './support/app';

const KEY = 'backup-cli-key-0123456789abcdef';

/** `agent-data backup FILE` and `agent-data restore FILE` against running servers (docs/operations.md). */
describe('agent-data backup and restore', () => {
  let source: TestApp;
  let target: TestApp;
  let dir: string;
  const cli = (app: { baseUrl: string }, ...args: string[]) =>
    agentData(args, { AGENT_DATA_URL: app.baseUrl, AGENT_DATA_API_KEY: KEY });

  beforeAll(async () => {
    source = await startTestApp({ API_KEYS: `ops:${KEY}:admin` });
    // The server answers a restore at once: the command waits until search finds them all.
    target = await startTestApp({
      API_KEYS: `ops:${KEY}:admin`,
      VECTOR_SYNC_ENABLED: 'true',
      RESTORE_LEXICAL_WAIT_MS: '0',
    });
    await insertIds(
      await source.db.client(),
      Array.from({ length: 200 }, (_, i) => `cli/doc-${i}.md`),
    );
    dir = mkdtempSync(join(tmpdir(), 'agent-data-backup-'));
  });
  afterAll(async () => {
    await source.close();
    await target.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('backs up into a file, then restores it into an empty server', async () => {
    const file = join(dir, 'kb.backup.gz');
    const backup = await cli(source, 'backup', file, '--json');
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    const report = JSON.parse(backup.stdout);
    expect(report).toEqual({
      file,
      bytes: readFileSync(file).length,
      tables: {
        kb_documents: 200,
        kb_document_snapshots: 0,
        kb_audit: 200,
        kb_sources: 0,
        kb_source_items: 0,
        kb_source_runs: 0,
      },
      seconds: expect.any(Number),
    });
    expect(existsSync(`${file}.partial`)).toBe(false);

    const restored = await cli(target, 'restore', file);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(
      /^restored 200 documents, 0 earlier versions, 200 audit rows and 0 sources from .* in [\d.]+ s; search finds them now, their vectors follow\n$/,
    );
    const search = await request(target.baseUrl)
      .get('/search')
      .query({ query: 'body of cli/doc-199.md', mode: 'lexical', limit: 1 })
      .set('X-API-Key', KEY)
      .expect(200);
    expect(search.body.results[0].document_id).toBe('cli/doc-199.md');
    const document = await request(target.baseUrl)
      .get(idPath('cli/doc-7.md'))
      .set('X-API-Key', KEY)
      .expect(200);
    expect(document.body.body).toBe('body of cli/doc-7.md');

    // Again: the server now holds documents, and says so in one line.
    const refused = await cli(target, 'restore', file);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'agent-data: the knowledge base is not empty (documents, audit rows found): a backup is restored only into an empty one\n',
    );
  });

  describe('a download cut short', () => {
    let cutting: Server;
    beforeAll(async () => {
      const whole = await request(source.baseUrl)
        .get('/admin/backup')
        .set('X-API-Key', KEY)
        .buffer(true)
        .parse((response, done) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => done(null, Buffer.concat(chunks)));
        })
        .expect(200);
      const half = (whole.body as Buffer).subarray(0, (whole.body as Buffer).length >> 1);
      // A server that sends half of a real backup and ends the answer as if it were whole.
      cutting = createServer((_request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/gzip' });
        response.end(half);
      });
      await new Promise<void>((resolve) => cutting.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise((resolve) => cutting.close(resolve)));

    it('leaves an earlier file as it was, with --force too', async () => {
      const file = join(dir, 'earlier.backup.gz');
      writeFileSync(file, 'the backup of yesterday');
      const { port } = cutting.address() as AddressInfo;
      const run = await cli({ baseUrl: `http://127.0.0.1:${port}` }, 'backup', file, '--force');
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^agent-data: the backup did not arrive whole: .*\n$/);
      expect(readFileSync(file, 'utf8')).toBe('the backup of yesterday');
      expect(existsSync(`${file}.partial`)).toBe(false);
    });

    it('leaves no file, and says why in one line', async () => {
      const file = join(dir, 'cut.backup.gz');
      const { port } = cutting.address() as AddressInfo;
      const run = await cli({ baseUrl: `http://127.0.0.1:${port}` }, 'backup', file);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^agent-data: the backup did not arrive whole: .*\n$/);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.partial`)).toBe(false);
    });
  });

  it('refuses to replace an existing file unless --force', async () => {
    const file = join(dir, 'kept.backup.gz');
    writeFileSync(file, 'the backup of yesterday');
    const refused = await cli(source, 'backup', file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`agent-data: ${file} exists: pass --force to replace it\n`);
    expect(readFileSync(file, 'utf8')).toBe('the backup of yesterday');

    const replaced = await cli(source, 'backup', file, '--force', '--json');
    expect(replaced.code).toBe(0);
    expect(JSON.parse(replaced.stdout).tables.kb_documents).toBe(200);
    expect(gunzipSync(readFileSync(file)).toString('utf8')).toMatch(/^AGENT-DATA-BACKUP 1\n/);
  });

  it('states the size of a small backup in kB, as the file measures it', async () => {
    const file = join(dir, 'small.backup.gz');
    const run = await cli(source, 'backup', file);
    expect(run.code).toBe(0);
    const bytes = readFileSync(file).length;
    // 200 short documents: kilobytes, which once read "0.0 MB".
    expect(bytes).toBeGreaterThanOrEqual(1000);
    expect(bytes).toBeLessThan(1e6);
    const [summary, seconds] = run.stdout.split(/, (?=[\d.]+ s\)\n$)/);
    expect(summary).toBe(
      `backed up 200 documents, 0 earlier versions, 200 audit rows and 0 sources into ${file} (${(bytes / 1000).toFixed(1)} kB`,
    );
    expect(seconds).toMatch(/^\d+\.\d s\)\n$/);
  });

  it('says a file that is not gzip is not a backup, before sending it', async () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'some notes, not a backup');
    const run = await cli(target, 'restore', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`agent-data: ${file} is not an Agent Data backup (not gzip)\n`);
  });

  it('explains itself', async () => {
    const answer = await cli(source, 'backup', '--help');
    expect(answer.code).toBe(0);
    expect(answer.stdout).toMatch(/^agent-data backup FILE \[--force\]/);
    expect(answer.stdout).toMatch(/--force +replace FILE if it exists/);
    const overview = await cli(source, '--help');
    expect(overview.code).toBe(0);
    expect(overview.stdout).toMatch(/^ {2}backup FILE \[--force\] \[--json\] /m);
    expect(overview.stdout).toContain('(--force: replace FILE if it exists)');
    const wrong = await cli(source, 'restore');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^agent-data: restore takes one FILE\n\nagent-data restore FILE/);
  });
});
