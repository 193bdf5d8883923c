import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { agentData } from './support/agent-data-cli';
import type { Json } from './support/mcp-http';

const KEY = 'cli-links-key-0123456789abcdef01';

/** An Obsidian vault: notes in folders, wikilinks by name, path, heading and alias, an embed. */
const VAULT: Record<string, string> = {
  '.obsidian/app.json': '{}',
  'Home.md':
    '# Home\n\n[[Backup runbook]] · [[Disk full|when the disk is full]] · [[ops/Restore#Steps]]\n\n![[diagram.png]]\n',
  'ops/Backup runbook.md':
    '---\ntags: [ops]\n---\nSee [[Restore]] and [the home note](../Home.md).\n',
  'ops/Disk full.md': 'Runbook. Back to [[Home]].\n',
  'ops/Restore.md': '## Steps\n\n1. Read [[Backup runbook]] first.\n',
  'daily/2026-11-29.md': 'Did a [[Restore]] today; see [[ops/Disk full]].\n',
  'attachments/diagram.png': 'png',
};

/**
 * `agent-data import` and `export` with links (docs/cli.md): an Obsidian vault imported under
 * a prefix keeps every wikilink resolving, a note renamed in the vault is moved without a
 * conflict, and an export writes links that work as files.
 */
describe('agent-data import and export with links', () => {
  let t: TestApp;
  let dir: string;
  const cli = (...args: string[]) =>
    agentData(args, { AGENT_DATA_URL: t.baseUrl, AGENT_DATA_API_KEY: KEY });
  const get = (path: string) =>
    request(t.baseUrl)
      .get(path)
      .set('X-API-Key', KEY)
      .expect(200)
      .then((r) => r.body as Json);
  const ids = (path: string) => `/documents/${path.split('/').map(encodeURIComponent).join('/')}`;
  const write = (root: string, files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
  };

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS: `cli:${KEY}:admin` });
    dir = mkdtempSync(join(tmpdir(), 'agent-data-cli-links-'));
    write(join(dir, 'vault'), VAULT);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports an Obsidian vault under a prefix with every wikilink resolving to the imported notes', async () => {
    const run = await cli('import', join(dir, 'vault'), '--prefix', 'notes');
    expect(run.stdout.trim().split('\n').pop()).toMatch(/^created 5, .*failed 0$/);
    const home = await get(`${ids('notes/Home.md')}/links`);
    expect(home.links.map((l: Json) => [l.target, l.document_id])).toEqual([
      ['Backup runbook', 'notes/ops/Backup runbook.md'],
      ['Disk full', 'notes/ops/Disk full.md'],
      ['ops/Restore', 'notes/ops/Restore.md'],
      ['diagram.png', null],
    ]);
    const restore = await get(`${ids('notes/ops/Restore.md')}/backlinks`);
    expect(restore.backlinks.map((b: Json) => b.document_id)).toEqual([
      'notes/Home.md',
      'notes/daily/2026-11-29.md',
      'notes/ops/Backup runbook.md',
    ]);
    const broken = await get('/documents/links/broken?prefix=notes/');
    expect(broken.items.map((i: Json) => i.target)).toEqual(['diagram.png']);
  });

  it('moves a note renamed in the vault, its links rewritten in the vault, without a conflict', async () => {
    // Obsidian renames the file and writes the links to it again.
    const vault = join(dir, 'vault');
    mkdirSync(join(vault, 'ops', 'restore'));
    renameSync(
      join(vault, 'ops', 'Restore.md'),
      join(vault, 'ops', 'restore', 'Restore procedure.md'),
    );
    for (const file of ['Home.md', 'ops/Backup runbook.md', 'daily/2026-11-29.md']) {
      const path = join(vault, file);
      writeFileSync(
        path,
        readFileSync(path, 'utf8')
          .replace('[[ops/Restore#Steps]]', '[[ops/restore/Restore procedure#Steps]]')
          .replace('[[Restore]]', '[[Restore procedure]]'),
      );
    }
    const run = await cli('import', vault, '--prefix', 'notes');
    expect(run.stdout.trim().split('\n').pop()).toMatch(/moved 1, .*failed 0$/);
    const broken = await get('/documents/links/broken?prefix=notes/');
    expect(broken.items.map((i: Json) => i.target)).toEqual(['diagram.png']);
    const moved = await get(`${ids('notes/ops/restore/Restore procedure.md')}/backlinks`);
    expect(moved.count).toBe(3);
  });

  it('exports links that work as files: kb:// URIs and paths from the root become relative', async () => {
    const put = (document_id: string, body: string) =>
      request(t.baseUrl)
        .post('/documents')
        .set('X-API-Key', KEY)
        .send({ document_id, body })
        .expect(201);
    await put(
      'export/a/index.md',
      '# Index\n\nSee [the guide](kb://export/b/guide.md#setup), kb://export/b/guide.md and [[guide]].\n\n`kb://export/b/guide.md`\n',
    );
    await put(
      'export/a/from-root.md',
      '[Guide](/export/b/guide.md) and [again][g].\n\n[g]: </export/b/guide.md>\n',
    );
    await put('export/b/guide.md', '# Guide\n\nBack [up](../a/index.md).\n');
    const out = join(dir, 'out');
    const run = await cli('export', 'export', out);
    expect(run.code).toBe(0);
    const index = readFileSync(join(out, 'a', 'index.md'), 'utf8');
    expect(index).toContain(
      'See [the guide](../b/guide.md#setup), [kb://export/b/guide.md](../b/guide.md) and [[guide]].',
    );
    expect(index).toContain('`kb://export/b/guide.md`');
    const fromRoot = readFileSync(join(out, 'a', 'from-root.md'), 'utf8');
    expect(fromRoot).toContain('[Guide](../b/guide.md) and [again][g].\n\n[g]: <../b/guide.md>');
    // Each relative link names a file of the export.
    for (const target of ['../b/guide.md', '../a/index.md']) {
      expect(existsSync(resolve(join(out, 'a'), target))).toBe(true);
    }
    // Imported back, only the documents whose links were written as relative paths change.
    const again = await cli('import', out, '--prefix', 'export');
    expect(again.stdout.trim().split('\n').pop()).toMatch(
      /^created 0, updated 2, moved 0, unchanged 1,/,
    );
  });
});
