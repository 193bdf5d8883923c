import { Dirent, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FOLDER_FILE_SYSTEM } from '../../../conversion/folder-files';
import {
  aConnector,
  aContext,
  aFolder,
  countingOpens,
  knownOf,
  loadChanged,
} from '../../../../test/support/folder-source';
import { temporaryFolders, writeFile } from '../../../../test/support/folders';
import type { Enumeration } from '../connector';
import { FolderConnector } from './folder-connector';

const folders = temporaryFolders('folder-source-');
afterEach(() => folders.removeAll());

const INTRO = '---\ntitle: Getting started\ntags: [intro, guide]\nowner: docs-team\n---\n# Intro\n';

describe('FolderConnector.enumerate', () => {
  it('lists the files as keys with versions and paths, and loads them as documents', async () => {
    const root = await aFolder(folders, {
      'guide/intro.md': INTRO,
      'guide/other.md': '# Other\n',
      'ünïcode/日本.md': '# 日本\n',
      'notes.txt': 'plain notes\n',
      'page.html': '<h1>Release page</h1><p>The <b>marmalade</b> release.</p>',
      'image.png': 'png',
      'big.md': 'x'.repeat(5000),
      '.obsidian/workspace.md': 'hidden',
      'bad\nname.md': 'a name with a newline',
    });
    const { fs, opened } = countingOpens();
    const enumeration = await aConnector({ path: root }, { fs }).enumerate(aContext());

    expect(enumeration.complete).toBe(true);
    expect(enumeration.items.map((item) => item.key)).toEqual([
      'guide/intro.md',
      'guide/other.md',
      'notes.txt',
      'page.html',
      'ünïcode/日本.md',
    ]);
    expect(enumeration.items.map((item) => item.uri)).toEqual(
      enumeration.items.map((item) => join(root, ...item.key.split('/'))),
    );
    for (const item of enumeration.items) expect(item.version).toMatch(/^\d+-\d+-\d+-\d+$/);
    expect(new Set(enumeration.items.map((item) => item.version)).size).toBe(5);
    expect(enumeration.skipped).toEqual([
      { key: '.obsidian', reason: 'hidden' },
      {
        key: '"bad\\nname.md"',
        reason: 'its name holds a control character or a backslash, which no id may',
      },
      { key: 'big.md', reason: '5000 bytes, over the body limit of 4096' },
      { key: 'image.png', reason: 'not a type that is imported (.png)' },
    ]);
    expect(enumeration.failed).toEqual([]);
    expect(opened).toEqual([]); // listing reads no file

    const documents = await loadChanged(enumeration, new Map());
    expect(documents.find((d) => d.key === 'guide/intro.md')!.document).toEqual({
      body: '# Intro\n',
      title: 'Getting started',
      tags: ['intro', 'guide'],
      metadata: { owner: 'docs-team' },
    });
    const page = documents.find((d) => d.key === 'page.html')!.document;
    expect(page.body).toContain('# Release page');
    expect(page.metadata).toEqual({ source_type: 'html' });
    expect(opened).toHaveLength(5);
  });

  it('gives an unchanged folder the same versions, so that no file is read again', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`part-${i % 5}/doc-${i}.md`, `# Doc ${i}\n`]),
    );
    const root = await aFolder(folders, files);
    const { fs, opened } = countingOpens();
    const connector = aConnector({ path: root }, { fs });
    const first = await connector.enumerate(aContext());
    expect(await loadChanged(first, new Map())).toHaveLength(50);
    expect(opened).toHaveLength(50);

    opened.length = 0;
    const known = knownOf(first);
    const again = await connector.enumerate(aContext({ known }));
    expect(again.items.map((item) => [item.key, item.version])).toEqual(
      first.items.map((item) => [item.key, item.version]),
    );
    expect(await loadChanged(again, known)).toEqual([]);
    expect(opened).toEqual([]);
    expect(again.moves).toEqual([]);
  });

  it('changes the version of a modified file only, even at the same size', async () => {
    const root = await aFolder(folders, { 'a.md': 'first\n', 'b.md': 'other\n' });
    const connector = aConnector({ path: root });
    const first = await connector.enumerate(aContext());
    // Same size, and a modification time still an hour ago, but a minute later.
    writeFile(root, 'a.md', 'again\n', new Date(Date.now() - 3_540_000));
    const known = knownOf(first);
    const second = await connector.enumerate(aContext({ known }));
    const changed = await loadChanged(second, known);
    expect(changed).toEqual([{ key: 'a.md', document: { body: 'again\n' } }]);
  });

  it('marks the version of a file changed just before the listing, so that it is read again', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const root = await aFolder(folders, { 'old.md': 'old\n' });
    await sleep(400);
    writeFile(root, 'fresh.md', 'fresh\n', new Date());
    const connector = new FolderConnector({ path: root }, { unsettledMs: 300 });
    const version = (e: Enumeration, key: string) => e.items.find((i) => i.key === key)!.version;
    const first = await connector.enumerate(aContext());
    expect(version(first, 'fresh.md')).toMatch(/^\d+-\d+-\d+-\d+-unsettled-\d+$/);
    expect(version(first, 'old.md')).toMatch(/^\d+-\d+-\d+-\d+$/);
    // A write in the same tick of the file system's clock, at the same size, would leave its
    // times as they were: unchanged, the file is read again all the same.
    await sleep(5);
    const known = knownOf(first);
    const second = await connector.enumerate(aContext({ known }));
    expect(await loadChanged(second, known)).toEqual([
      { key: 'fresh.md', document: { body: 'fresh\n' } },
    ]);
    // Once settled, its version is the plain one, and stays.
    await sleep(400);
    const third = await connector.enumerate(aContext({ known: knownOf(second) }));
    expect(version(third, 'fresh.md')).toMatch(/^\d+-\d+-\d+-\d+$/);
    const fourth = await connector.enumerate(aContext({ known: knownOf(third) }));
    expect(version(fourth, 'fresh.md')).toBe(version(third, 'fresh.md'));
    expect(version(fourth, 'old.md')).toBe(version(first, 'old.md'));
  });

  it('reports a rename as a move and a deletion as a missing key', async () => {
    const root = await aFolder(folders, { 'a.md': '# A\n', 'b.md': '# B\n', 'c.md': '# C\n' });
    const connector = aConnector({ path: root });
    const first = await connector.enumerate(aContext());
    renameSync(join(root, 'a.md'), join(root, 'renamed.md'));
    writeFile(root, 'sub/.keep', '');
    renameSync(join(root, 'b.md'), join(root, 'sub', 'b.md'));
    rmSync(join(root, 'c.md'));
    const known = knownOf(first);
    const second = await connector.enumerate(aContext({ known }));
    expect(second.items.map((item) => item.key)).toEqual(['renamed.md', 'sub/b.md']);
    expect(second.moves).toEqual([
      { from: 'a.md', to: 'renamed.md' },
      { from: 'b.md', to: 'sub/b.md' },
    ]);
    expect(second.complete).toBe(true);
    expect(second.failed).toEqual([]);
    // A rename sets the change time: the moved file is read once, to be sure of its content.
    expect((await loadChanged(second, known)).map((c) => c.key)).toEqual([
      'renamed.md',
      'sub/b.md',
    ]);
  });

  it('changes the version of a file replaced by one of the same size and modification time', async () => {
    const root = await aFolder(folders, { 'a.md': '# A\n' });
    const connector = aConnector({ path: root });
    const first = await connector.enumerate(aContext());
    // What `cp -p` or `rsync -t` do: another content, the time of the original kept.
    rmSync(join(root, 'a.md'));
    writeFile(root, 'a.md', '# B\n');
    const known = knownOf(first);
    const second = await connector.enumerate(aContext({ known }));
    expect(await loadChanged(second, known)).toEqual([
      { key: 'a.md', document: { body: '# B\n' } },
    ]);
  });

  it('keeps to the include and exclude globs, not listing a folder excluded whole', async () => {
    const root = await aFolder(folders, {
      'guide/a.md': '# A\n',
      'guide/b.txt': 'b\n',
      'guide/README.md': '# Readme\n',
      'drafts/x.md': '# X\n',
      'drafts/deep/y.md': '# Y\n',
      'top.md': '# Top\n',
    });
    const listed: string[] = [];
    const fs = {
      ...NODE_FOLDER_FILE_SYSTEM,
      readdir: (path: string) => {
        listed.push(path);
        return NODE_FOLDER_FILE_SYSTEM.readdir(path);
      },
    };
    const connector = new FolderConnector(
      { path: root, include: ['**/*.md'], exclude: ['drafts/**', '**/README.md'] },
      { fs },
    );
    const enumeration = await connector.enumerate(aContext());
    expect(enumeration.items.map((item) => item.key)).toEqual(['guide/a.md', 'top.md']);
    expect(enumeration.skipped).toEqual([]); // what the globs refuse is not the source's
    expect(listed).toEqual([root, join(root, 'guide')]);
  });

  it('lists a file system that does not say the type of its entries (by their lstat)', async () => {
    const outside = await aFolder(folders, { 'secret.md': '# Outside\n' });
    const root = await aFolder(folders, { 'a.md': '# A\n', 'sub/b.md': '# B\n', 'c.png': 'x' });
    symlinkSync(join(outside, 'secret.md'), join(root, 'link.md'));
    const untyped = (entry: Dirent): Dirent =>
      Object.assign(Object.create(Dirent.prototype) as Dirent, {
        name: entry.name,
        parentPath: entry.parentPath,
        path: entry.parentPath,
        isFile: () => false,
        isDirectory: () => false,
        isSymbolicLink: () => false,
        isFIFO: () => false,
        isSocket: () => false,
        isBlockDevice: () => false,
        isCharacterDevice: () => false,
      });
    const fs = {
      ...NODE_FOLDER_FILE_SYSTEM,
      readdir: async (path: string) => (await NODE_FOLDER_FILE_SYSTEM.readdir(path)).map(untyped),
    };
    const enumeration = await aConnector({ path: root, include: ['**/*.md'] }, { fs }).enumerate(
      aContext(),
    );
    expect(enumeration.items.map((item) => item.key)).toEqual(['a.md', 'sub/b.md']);
    expect(enumeration.skipped).toEqual([
      { key: 'link.md', reason: 'a symbolic link (not followed)' },
    ]);
  });

  it('never follows a symbolic link: a loop, a file outside, a folder outside', async () => {
    const outside = await aFolder(folders, { 'secret.md': '# Outside\n', 'dir/in.md': '# In\n' });
    const root = await aFolder(folders, { 'a.md': '# A\n' });
    symlinkSync('.', join(root, 'loop'));
    symlinkSync(join(outside, 'secret.md'), join(root, 'secret.md'));
    symlinkSync(join(outside, 'dir'), join(root, 'dir'));
    const enumeration = await aConnector({ path: root }).enumerate(aContext());
    expect(enumeration.items.map((item) => item.key)).toEqual(['a.md']);
    expect(enumeration.skipped).toEqual([
      { key: 'dir', reason: 'a symbolic link (not followed)' },
      { key: 'loop', reason: 'a symbolic link (not followed)' },
      { key: 'secret.md', reason: 'a symbolic link (not followed)' },
    ]);
  });

  it('follows the folder itself when it is given through a symbolic link', async () => {
    const real = await aFolder(folders, { 'a.md': '# A\n' });
    const holder = await aFolder(folders);
    symlinkSync(real, join(holder, 'link'));
    const enumeration = await aConnector({ path: join(holder, 'link') }).enumerate(aContext());
    expect(enumeration.items.map((item) => [item.key, item.uri])).toEqual([
      ['a.md', join(holder, 'link', 'a.md')],
    ]);
  });

  it('skips hidden files and folders, and lists nothing under them', async () => {
    const root = await aFolder(folders, {
      '.git/config.md': 'x',
      '.hidden.md': 'x',
      'sub/.DS_Store': 'x',
      'sub/visible.md': '# Visible\n',
    });
    const enumeration = await aConnector({ path: root }).enumerate(aContext());
    expect(enumeration.items.map((item) => item.key)).toEqual(['sub/visible.md']);
    expect(enumeration.skipped.map((s) => [s.key, s.reason])).toEqual([
      ['.git', 'hidden'],
      ['.hidden.md', 'hidden'],
      ['sub/.DS_Store', 'hidden'],
    ]);
  });
});
