import { getRandomPort } from 'get-port-please';
import { execFile } from 'node:child_process';
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Client } from 'pg';
import request from 'supertest';
import { aSavedPage } from './factories';
import { startTestApp, TestApp } from './support/app';
import { waitFor } from './support/wait';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'agent-data.js');
const KEY = 'cli-key-0123456789abcdef0123';

/**
 * The `agent-data` command against a running server (docs/cli.md): a folder in, again with
 * nothing changed, edited and renamed, exported and imported back.
 */
describe('agent-data import and export', () => {
  let t: TestApp;
  let sql: Client;
  let dir: string;
  const cli = (...args: string[]) => cliWith(KEY, ...args);
  const cliWith = async (key: string, ...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
        env: { ...process.env, AGENT_DATA_URL: t.baseUrl, AGENT_DATA_API_KEY: key },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS: `cli:${KEY}:admin`, VECTOR_SYNC_ENABLED: 'true' });
    sql = await t.db.client();
    dir = mkdtempSync(join(tmpdir(), 'agent-data-cli-'));
    const src = join(dir, 'src');
    mkdirSync(join(src, 'guide'), { recursive: true });
    mkdirSync(join(src, '.obsidian'));
    mkdirSync(join(src, 'ünïcode'));
    writeFileSync(
      join(src, 'guide', 'intro.md'),
      '---\ntitle: Getting started\ntags: [intro, guide]\nowner: docs-team\n---\n# Intro\n\nWelcome aboard.\n',
    );
    writeFileSync(join(src, 'guide', 'other.md'), '# Other\n\nA page about the harbour.\n');
    writeFileSync(join(src, 'ünïcode', '日本.md'), '# 日本\n\n東京の天気\n');
    writeFileSync(join(src, 'notes.txt'), 'plain notes\n');
    writeFileSync(join(src, 'page.html'), aSavedPage());
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf
      .addPage()
      .drawText('The quarterly zephyrine figures rose sharply.', { x: 40, y: 700, size: 12, font });
    writeFileSync(join(src, 'report.pdf'), await pdf.save());
    const docx = new Document({
      sections: [{ children: [new Paragraph('The docx memo mentions quokkas.')] }],
    });
    writeFileSync(join(src, 'memo.docx'), await Packer.toBuffer(docx));
    writeFileSync(join(src, 'broken.pdf'), 'not a pdf at all');
    writeFileSync(join(src, 'bad.md'), '---\ntitle: [unclosed\n---\nbody\n');
    writeFileSync(join(src, '.obsidian', 'workspace.md'), 'hidden');
    writeFileSync(join(src, 'image.png'), 'png');
    writeFileSync(join(src, 'big.md'), 'x'.repeat(5000));
    symlinkSync('.', join(src, 'loop'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports a folder, converting HTML, PDF and DOCX, skipping and failing with reasons', async () => {
    const first = await cli('import', join(dir, 'src'), '--prefix', 'kb', '--max-bytes', '4096');
    expect(first.code).toBe(1);
    expect(first.stdout.trim()).toBe(
      'created 7, updated 0, moved 0, unchanged 0, deleted 0, skipped 4, failed 2',
    );
    expect(first.stderr).toContain('skipped .obsidian: hidden');
    expect(first.stderr).toContain('skipped image.png: not a type that is imported (.png)');
    expect(first.stderr).toContain('skipped big.md: 5000 bytes, over the body limit of 4096');
    expect(first.stderr).toContain('skipped loop: a symbolic link (not followed)');
    expect(first.stderr).toMatch(/failed kb\/bad\.md: invalid front matter/);
    expect(first.stderr).toMatch(/failed kb\/broken\.pdf: not a readable PDF file/);
    expect(first.stderr).not.toMatch(/\n\s+at /); // never a stack trace

    const intro = await request(t.baseUrl)
      .get('/documents/kb/guide/intro.md')
      .set('X-API-Key', KEY);
    expect(intro.body).toMatchObject({
      title: 'Getting started',
      tags: ['intro', 'guide'],
      metadata: { owner: 'docs-team' },
      body: '# Intro\n\nWelcome aboard.\n',
    });
    // An HTML file is read as a fetched page is: its article, without the site around it.
    const page = await request(t.baseUrl).get('/documents/kb/page.html').set('X-API-Key', KEY);
    expect(page.body.title).toBe('Release page');
    expect(page.body.body).toContain('The **marmalade** release');
    expect(page.body.body).toContain('[the notes](notes.txt)'); // a file's link stays relative
    expect(page.body.body).not.toMatch(/Site menu|Site banner|Site footer/);
    expect(page.body.metadata).toEqual({ source_type: 'html' });
    const memo = await request(t.baseUrl).get('/documents/kb/memo.docx').set('X-API-Key', KEY);
    expect(memo.body.body).toContain('quokkas');

    await waitFor(
      async () =>
        (
          await sql.query(
            `SELECT count(*)::int AS n FROM kb_documents WHERE vector_status <> 'ready'`,
          )
        ).rows[0].n === 0,
      'the imported documents to be indexed',
    );
    const found = await request(t.baseUrl)
      .get('/search')
      .query({ query: 'quarterly zephyrine figures', mode: 'lexical' })
      .set('X-API-Key', KEY);
    expect(found.body.results[0].document_id).toBe('kb/report.pdf');
  });

  it('changes nothing the second time, then updates an edit and moves a rename', async () => {
    rmSync(join(dir, 'src', 'bad.md'));
    rmSync(join(dir, 'src', 'broken.pdf'));
    const again = await cli('import', join(dir, 'src'), '--prefix', 'kb', '--max-bytes', '4096');
    expect([again.code, again.stdout.trim()]).toEqual([
      0,
      'created 0, updated 0, moved 0, unchanged 7, deleted 0, skipped 4, failed 0',
    ]);
    const revisions = await sql.query(`SELECT sum(revision)::int AS n FROM kb_documents`);
    writeFileSync(join(dir, 'src', 'notes.txt'), 'plain notes, edited\n');
    const other = readFileSync(join(dir, 'src', 'guide', 'other.md'));
    rmSync(join(dir, 'src', 'guide', 'other.md'));
    writeFileSync(join(dir, 'src', 'guide', 'renamed.md'), other);
    const planned = await cli(
      ...['import', join(dir, 'src'), '--prefix', 'kb', '--max-bytes', '4096', '--dry-run'],
    );
    expect(planned.stdout.trim()).toBe(
      'dry run, nothing written; the run would report created 0, updated 1, moved 1, unchanged 5, deleted 0, skipped 4, failed 0',
    );
    const changed = await cli('import', join(dir, 'src'), '--prefix', 'kb', '--max-bytes', '4096');
    expect(changed.stdout.trim()).toBe(
      'created 0, updated 1, moved 1, unchanged 5, deleted 0, skipped 4, failed 0',
    );
    const after = await sql.query(`SELECT sum(revision)::int AS n FROM kb_documents`);
    expect(after.rows[0].n).toBe(revisions.rows[0].n + 1); // the edit; a move keeps its revision
    await request(t.baseUrl).get('/documents/kb/guide/other.md').set('X-API-Key', KEY).expect(404);
    await request(t.baseUrl)
      .get('/documents/kb/guide/renamed.md')
      .set('X-API-Key', KEY)
      .expect(200);
  });

  it('exports a folder that imports back with no change, non-ASCII names included', async () => {
    const out = join(dir, 'out');
    const exported = await cli('export', 'kb', out);
    expect([exported.code, exported.stdout.trim()]).toEqual([0, 'exported 7, failed 0']);
    expect(readFileSync(join(out, 'guide', 'intro.md'), 'utf8')).toBe(
      '---\ntitle: Getting started\ntags:\n  - intro\n  - guide\nowner: docs-team\n---\n# Intro\n\nWelcome aboard.\n',
    );
    expect(readFileSync(join(out, 'ünïcode', '日本.md'), 'utf8')).toContain('東京の天気');
    const back = await cli('import', out, '--prefix', 'kb', '--json');
    const report = JSON.parse(back.stdout);
    expect(report.summary).toBe(
      'created 0, updated 0, moved 0, unchanged 7, deleted 0, skipped 0, failed 0',
    );
    // --mirror deletes what has no file any more; a dry run says so first, and reads which
    // existing documents a file would change (its body, or only its front matter's tags).
    rmSync(join(out, 'notes.txt'));
    const intro = join(out, 'guide', 'intro.md');
    writeFileSync(
      intro,
      readFileSync(intro, 'utf8').replace('  - guide\n', '  - guide\n  - new\n'),
    );
    const dry = await cli('import', out, '--prefix', 'kb', '--mirror', '--dry-run', '--json');
    const planned = JSON.parse(dry.stdout);
    expect(planned.summary).toBe(
      'dry run, nothing written; the run would report created 0, updated 1, moved 0, unchanged 5, deleted 1, skipped 0, failed 0',
    );
    expect([planned.updated, planned.deleted]).toEqual([['kb/guide/intro.md'], ['kb/notes.txt']]);
    await request(t.baseUrl).get('/documents/kb/notes.txt').set('X-API-Key', KEY).expect(200);
    const mirrored = await cli('import', out, '--prefix', 'kb', '--mirror');
    expect(mirrored.stdout.trim()).toBe(
      'created 0, updated 1, moved 0, unchanged 5, deleted 1, skipped 0, failed 0',
    );
    await request(t.baseUrl).get('/documents/kb/notes.txt').set('X-API-Key', KEY).expect(404);
  });

  it('exports ids that name a route (notes/history), and --mirror keeps the documents of files it skips', async () => {
    const ids = [
      'odd/history',
      'odd/README',
      'odd/config.json',
      'odd/.hidden.md',
      'odd/.drafts/x.md',
    ];
    for (const id of ids) {
      await request(t.baseUrl)
        .post('/documents')
        .set('X-API-Key', KEY)
        .send({ document_id: id, body: `The body of ${id}.` })
        .expect(201);
    }
    const out = join(dir, 'odd-out');
    const exported = await cli('export', 'odd', out);
    expect([exported.code, exported.stdout.trim()]).toEqual([0, 'exported 5, failed 0']);
    expect(readFileSync(join(out, 'history'), 'utf8')).toContain('The body of odd/history.');
    // An import reads none of them back (no extension, .json, hidden, in a hidden folder): it
    // skips them, and deletes none of their documents for it.
    const back = await cli('import', out, '--prefix', 'odd', '--mirror', '--json');
    const report = JSON.parse(back.stdout);
    expect(report.summary).toBe(
      'created 0, updated 0, moved 0, unchanged 0, deleted 0, skipped 5, failed 0',
    );
    await request(t.baseUrl).get('/documents/odd/.drafts/x.md').set('X-API-Key', KEY).expect(200);
    await request(t.baseUrl).get('/documents/odd%2Fhistory').set('X-API-Key', KEY).expect(200);
    await request(t.baseUrl).get('/documents/odd/config.json').set('X-API-Key', KEY).expect(200);
  });

  it('names a document by its file name composed (NFC), as written on macOS decomposed', async () => {
    const folder = join(dir, 'nfd');
    mkdirSync(folder);
    writeFileSync(join(folder, 'cafe\u0301.md'), '# Café\n\nThe menu.\n');
    // As an import before ids were composed left it: its id decomposed. It keeps it.
    writeFileSync(join(folder, 'cre\u0300me.md'), '# Crème\n');
    await request(t.baseUrl)
      .post('/documents')
      .set('X-API-Key', KEY)
      .send({ document_id: 'nfd/cre\u0300me.md', title: 'Crème', body: '# Crème\n' })
      .expect(201);
    const imported = await cli('import', folder, '--prefix', 'nfd', '--mirror');
    expect([imported.code, imported.stdout.trim()]).toEqual([
      0,
      'created 1, updated 0, moved 0, unchanged 1, deleted 0, skipped 0, failed 0',
    ]);
    await request(t.baseUrl)
      .get(`/documents/nfd/${encodeURIComponent('caf\u00e9.md')}`)
      .set('X-API-Key', KEY)
      .expect(200);
  });

  it('fails the second of two file names that differ only in composition, naming the first', async () => {
    const folder = join(dir, 'twins');
    mkdirSync(folder);
    writeFileSync(join(folder, 'caf\u00e9.md'), '# Composed\n');
    writeFileSync(join(folder, 'cafe\u0301.md'), '# Decomposed\n');
    const imported = await cli('import', folder, '--prefix', 'twins');
    expect(imported.code).toBe(1);
    expect(imported.stdout.trim()).toBe(
      'created 1, updated 0, moved 0, unchanged 0, deleted 0, skipped 0, failed 1',
    );
    const [first, second] = imported.stderr.includes('cafe\u0301.md: caf\u00e9.md')
      ? ['caf\u00e9.md', 'cafe\u0301.md']
      : ['cafe\u0301.md', 'caf\u00e9.md'];
    expect(imported.stderr).toContain(
      `${second}: ${first} has this name, composed (NFC), and holds twins/caf\u00e9.md`,
    );
  });

  it('skips a 2 GiB file without reading it, and names the server when none answers', async () => {
    const huge = join(dir, 'huge');
    mkdirSync(huge);
    writeFileSync(join(huge, 'small.md'), '# Small\n');
    // Sparse: 2 GiB by its size, nothing on disk.
    const fd = openSync(join(huge, 'huge.md'), 'w');
    ftruncateSync(fd, 2 * 1024 ** 3);
    closeSync(fd);
    const skipped = await cli('import', huge, '--prefix', 'huge');
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain(
      'skipped huge.md: 2147483648 bytes, over the body limit of 1048576',
    );
    expect(skipped.stdout).toContain('created 1,');

    const closed = await getRandomPort('127.0.0.1');
    const { code, stderr } = await run(process.execPath, [BIN, 'import', huge], {
      env: {
        ...process.env,
        AGENT_DATA_URL: `http://127.0.0.1:${closed}`,
        AGENT_DATA_API_KEY: KEY,
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(code).toBe(1);
    expect(stderr.trim().split('\n').at(-1)).toBe(
      `agent-data: no server at http://127.0.0.1:${closed} (ECONNREFUSED)`,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('answers a usage error with 2 and a clear line, and a bad target or key with 1', async () => {
    expect((await cli('import')).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli('import', join(dir, 'src'), '--mirror')).stderr).toContain(
      '--mirror needs --prefix',
    );
    const missing = await cli('import', join(dir, 'nope'));
    expect([missing.code, missing.stderr.trim()]).toEqual([
      1,
      `agent-data: ${join(dir, 'nope')} does not exist`,
    ]);
    writeFileSync(join(dir, 'a-file'), 'x');
    const onFile = await cli('export', 'kb', join(dir, 'a-file'));
    expect([onFile.code, onFile.stderr.trim()]).toEqual([
      1,
      `agent-data: ${join(dir, 'a-file')} is not a folder`,
    ]);
    const { stderr, code } = await cliWith(
      'wrong-key-0123456789abcdef',
      'export',
      'kb',
      join(dir, 'x'),
    );
    expect([code, stderr.trim()]).toEqual([1, 'agent-data: the API key is not valid']);
    expect((await cli('import', '--help')).stdout).toContain('agent-data import <dir>');

    const none = await cli('export', 'nosuch', join(dir, 'z'));
    expect([none.code, none.stdout.trim(), none.stderr.trim()]).toEqual([
      0,
      'exported 0, failed 0',
      "no document under nosuch/ (a folder, as import's --prefix; nothing was written)",
    ]);

    // A prefix no id can start with is said before anything is read or written.
    for (const prefix of ['../x', '/abs', 'a//b']) {
      const refused = await cli('import', join(dir, 'src'), '--prefix', prefix, '--dry-run');
      expect([refused.code, refused.stderr.split('\n')[0]]).toEqual([
        2,
        expect.stringMatching(/^agent-data: --prefix: must not/),
      ]);
    }
    const ftp = await cli('export', 'kb', join(dir, 'y'), '--server', 'ftp://127.0.0.1');
    expect([ftp.code, ftp.stderr.split('\n')[0]]).toEqual([
      2,
      'agent-data: --server ftp://127.0.0.1 is not an http:// or https:// URL',
    ]);
    const keyFile = join(dir, 'no-such-key');
    const noFile = await cli('export', 'kb', join(dir, 'y'), '--api-key-file', keyFile);
    expect([noFile.code, noFile.stderr.trim()]).toEqual([
      1,
      `agent-data: cannot read the API key file ${keyFile}: no such file`,
    ]);
    writeFileSync(keyFile, '\n');
    const empty = await cli('export', 'kb', join(dir, 'y'), '--api-key-file', keyFile);
    expect([empty.code, empty.stderr.trim()]).toEqual([
      1,
      `agent-data: the API key file ${keyFile} is empty`,
    ]);
  });
});
