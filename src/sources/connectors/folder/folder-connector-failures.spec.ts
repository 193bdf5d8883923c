import { appendFileSync, chmodSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FOLDER_FILE_SYSTEM, type FolderFileSystem } from '../../../conversion/folder-files';
import { aConnector, aContext, aFolder, knownOf } from '../../../../test/support/folder-source';
import { temporaryFolders } from '../../../../test/support/folders';
import { openNoFollow, type OpenFile } from './steady-read';

const folders = temporaryFolders('folder-source-failures-');
afterEach(() => folders.removeAll());

/** Whether file modes bind this process (root reads and lists whatever the mode says). */
const modesBind = process.getuid?.() !== 0;

/** An error as the file system gives it (`EACCES: permission denied, scandir '…'`). */
function fsError(code: string, call: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failed, ${call} '${path}'`), { code, path });
}

/** The real file system, but for the calls `fail` answers with an error. */
function failing(fail: {
  readdir?: (path: string) => NodeJS.ErrnoException | null;
  lstat?: (path: string) => NodeJS.ErrnoException | null;
}): FolderFileSystem {
  return {
    readdir: async (path) => {
      const error = fail.readdir?.(path);
      if (error) throw error;
      return NODE_FOLDER_FILE_SYSTEM.readdir(path);
    },
    lstat: async (path) => {
      const error = fail.lstat?.(path);
      if (error) throw error;
      return NODE_FOLDER_FILE_SYSTEM.lstat(path);
    },
  };
}

/** Opens for real, but the first `times` reads (over all opens) append to the file after. */
function appendingWhileRead(times: number): OpenFile {
  let left = times;
  return async (path) => {
    const handle = await openNoFollow(path);
    return {
      stat: (options) => handle.stat(options),
      read: async (buffer, offset, length, position) => {
        const result = await handle.read(buffer, offset, length, position);
        if (left > 0) {
          left -= 1;
          appendFileSync(path, ' and more');
        }
        return result;
      },
      close: () => handle.close(),
    };
  };
}

describe('FolderConnector: files changing while they are read', () => {
  it('fails a file that vanished between the listing and the reading', async () => {
    const root = await aFolder(folders, { 'a.md': '# A\n' });
    const [item] = (await aConnector({ path: root }).enumerate(aContext())).items;
    rmSync(join(root, 'a.md'));
    await expect(item.load!()).rejects.toThrow('it vanished between the listing and the reading');
  });

  it('reads a file again when it changed during the read, and fails it if it still does', async () => {
    const root = await aFolder(folders, { 'a.md': '# A\n', 'b.md': '# B\n' });
    const once = await aConnector(
      { path: root },
      { fs: { ...NODE_FOLDER_FILE_SYSTEM, open: appendingWhileRead(1) } },
    ).enumerate(aContext());
    await expect(once.items[0].load!()).resolves.toEqual({ body: '# A\n and more' });

    const always = await aConnector(
      { path: root },
      { fs: { ...NODE_FOLDER_FILE_SYSTEM, open: appendingWhileRead(Infinity) } },
    ).enumerate(aContext());
    await expect(always.items[1].load!()).rejects.toThrow(
      'it kept changing while it was read (it is read again at the next run)',
    );
  });

  it('fails a file that grew over the body limit, or became a link, since it was listed', async () => {
    const outside = await aFolder(folders, { 'secret.md': '# Not in the folder\n' });
    const root = await aFolder(folders, { 'grows.md': '# Small\n', 'becomes-link.md': '# A\n' });
    const { items } = await aConnector({ path: root }).enumerate(aContext());
    writeFileSync(join(root, 'grows.md'), 'x'.repeat(5000));
    rmSync(join(root, 'becomes-link.md'));
    symlinkSync(join(outside, 'secret.md'), join(root, 'becomes-link.md'));
    const load = (key: string) => items.find((item) => item.key === key)!.load!();
    await expect(load('grows.md')).rejects.toThrow(
      'it changed since it was listed: 5000 bytes, over the body limit of 4096',
    );
    await expect(load('becomes-link.md')).rejects.toThrow(
      'it became a symbolic link since it was listed (not followed)',
    );
  });
});

describe('FolderConnector: what cannot be read', () => {
  /**
   * A folder inside that cannot be listed: the known keys under it are failed (kept), the
   * rest of the folder synced whole. Run as root here, where `chmod 000` does not stop a
   * listing, the denial is the file system's answer put in its place; the same test runs on
   * the real mode below where modes bind.
   */
  it('fails the known keys under a folder that cannot be listed, and lists the rest', async () => {
    const root = await aFolder(folders, {
      'a.md': '# A\n',
      'gone.md': '# Gone\n',
      'private/x.md': '# X\n',
      'private/deep/y.md': '# Y\n',
      'private/excluded.txt': 'no longer wanted\n',
    });
    const first = await aConnector({ path: root }).enumerate(aContext());
    rmSync(join(root, 'gone.md'));
    const fs = failing({
      readdir: (path) =>
        path === join(root, 'private') ? fsError('EACCES', 'scandir', path) : null,
    });
    const second = await aConnector({ path: root, exclude: ['**/*.txt'] }, { fs }).enumerate(
      aContext({ known: knownOf(first) }),
    );
    expect(second.complete).toBe(true);
    expect(second.items.map((item) => item.key)).toEqual(['a.md']);
    expect(second.failed).toEqual([
      { key: 'private/deep/y.md', reason: 'its folder private cannot be listed (EACCES)' },
      { key: 'private/x.md', reason: 'its folder private cannot be listed (EACCES)' },
    ]);
    expect(second.skipped).toEqual([
      { key: 'private', reason: 'a folder that cannot be listed (EACCES)' },
    ]);
    // gone.md is neither listed nor failed: the reconciliation deletes it.
  });

  (modesBind ? it : it.skip)('does the same for a folder whose mode denies it', async () => {
    const root = await aFolder(folders, { 'a.md': '# A\n', 'private/x.md': '# X\n' });
    const first = await aConnector({ path: root }).enumerate(aContext());
    chmodSync(join(root, 'private'), 0o000);
    try {
      const second = await aConnector({ path: root }).enumerate(
        aContext({ known: knownOf(first) }),
      );
      expect(second.failed).toEqual([
        { key: 'private/x.md', reason: 'its folder private cannot be listed (EACCES)' },
      ]);
    } finally {
      chmodSync(join(root, 'private'), 0o755);
    }
  });

  it('fails a file that cannot be examined, and skips one of a type never imported', async () => {
    const root = await aFolder(folders, { 'a.md': '# A\n', 'b.md': '# B\n', 'c.png': 'png' });
    const fs = failing({
      lstat: (path) =>
        path.endsWith('b.md') || path.endsWith('c.png') ? fsError('EIO', 'lstat', path) : null,
    });
    const enumeration = await aConnector({ path: root }, { fs }).enumerate(aContext());
    expect(enumeration.items.map((item) => item.key)).toEqual(['a.md']);
    expect(enumeration.failed).toEqual([{ key: 'b.md', reason: 'it cannot be examined (EIO)' }]);
    expect(enumeration.skipped).toEqual([
      { key: 'c.png', reason: 'not a type that is imported (.png)' },
    ]);
  });

  (modesBind ? it : it.skip)('fails a file whose mode denies reading it', async () => {
    const root = await aFolder(folders, { 'locked.md': '# Locked\n' });
    chmodSync(join(root, 'locked.md'), 0o000);
    const [item] = (await aConnector({ path: root }).enumerate(aContext())).items;
    await expect(item.load!()).rejects.toThrow('it cannot be read (permission denied)');
  });

  it('throws, naming the problem, when the folder is missing, a file or cannot be listed', async () => {
    const holder = await aFolder(folders, { 'file.md': '# A file\n', 'folder/a.md': '# A\n' });
    await expect(
      aConnector({ path: join(holder, 'missing') }).enumerate(aContext()),
    ).rejects.toThrow(`the folder ${join(holder, 'missing')} does not exist`);
    await expect(
      aConnector({ path: join(holder, 'file.md') }).enumerate(aContext()),
    ).rejects.toThrow(`${join(holder, 'file.md')} is not a folder`);
    const root = join(holder, 'folder');
    const fs = failing({
      readdir: (path) => (path === root ? fsError('EACCES', 'scandir', path) : null),
    });
    await expect(aConnector({ path: root }, { fs }).enumerate(aContext())).rejects.toThrow(
      `the folder ${root} cannot be listed (EACCES)`,
    );
  });
});

describe('FolderConnector: bounds', () => {
  it('stops when the run is cancelled, throwing its reason, and lists no further', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`folder-${i}/a.md`, '# A\n']),
    );
    const root = await aFolder(folders, files);
    const controller = new AbortController();
    const listed: string[] = [];
    const fs = failing({
      readdir: (path) => {
        listed.push(path);
        if (listed.length === 3) controller.abort(new Error('the server is stopping'));
        return null;
      },
    });
    await expect(
      aConnector({ path: root }, { fs, concurrency: 1 }).enumerate(
        aContext({ signal: controller.signal }),
      ),
    ).rejects.toThrow('the server is stopping');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(listed.length).toBeLessThanOrEqual(4);
  });

  it('throws past the most entries it lists', async () => {
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`d${i}.md`, '# D\n']));
    const root = await aFolder(folders, files);
    await expect(
      aConnector({ path: root }, { maxEntries: 10 }).enumerate(aContext()),
    ).rejects.toThrow('the folder holds more than 10 entries, the most a walk lists');
  });
});
