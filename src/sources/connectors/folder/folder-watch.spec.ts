import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporaryFolders, writeFile } from '../../../../test/support/folders';
import { waitFor } from '../../../../test/support/wait';
import { FolderConnector } from './folder-connector';
import { keyFilter } from './key-filter';
import { watchErrorMessage, watchFolder, type FolderWatch } from './folder-watch';

const folders = temporaryFolders('folder-watch-');
const timing = { quietMs: 150, intervalMs: 400 };
/** Whether file modes bind this process (root reads whatever the mode says). */
const modesBind = process.getuid?.() !== 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A watch of `root` that counts its calls and records its errors. */
async function watching(root: string, options: Parameters<typeof watchFolder>[3] = {}) {
  const calls = { changed: 0, errors: [] as string[] };
  const watch = watchFolder(
    root,
    () => (calls.changed += 1),
    (error) => calls.errors.push(error.message),
    { timing, ...options },
  );
  watches.push(watch);
  await watch.ready;
  return { calls, watch };
}
const watches: FolderWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((watch) => watch.stop()));
  folders.removeAll();
});

/** Does `change`, then expects exactly one call more, and none after the quiet time. */
async function expectOneCall(calls: { changed: number }, change: () => void) {
  const before = calls.changed;
  change();
  await waitFor(() => calls.changed > before, 'the change to be told', 5_000);
  await sleep(timing.quietMs + timing.intervalMs + 200);
  expect(calls.changed).toBe(before + 1);
}

describe('watchFolder', () => {
  it('tells of a created, modified, renamed and deleted file once each', async () => {
    const root = folders.make({ 'a.md': '# A\n', 'sub/b.md': '# B\n' });
    const { calls } = await watching(root);
    await expectOneCall(calls, () => writeFile(root, 'sub/new.md', '# New\n', new Date()));
    await expectOneCall(calls, () => writeFileSync(join(root, 'a.md'), '# A, edited\n'));
    await expectOneCall(calls, () => renameSync(join(root, 'a.md'), join(root, 'sub', 'moved.md')));
    await expectOneCall(calls, () => rmSync(join(root, 'sub', 'b.md')));
    await expectOneCall(calls, () => rmSync(join(root, 'sub'), { recursive: true }));
    expect(calls.errors).toEqual([]);
  });

  it("tells of an editor's save (a temporary file renamed over the original) once", async () => {
    const root = folders.make({ 'notes.md': '# Notes\n' });
    const { calls } = await watching(root);
    // vim: a hidden swap file, then a backup and the new file renamed over the original.
    await expectOneCall(calls, () => {
      writeFileSync(join(root, '.notes.md.swp'), 'swap');
      writeFileSync(join(root, 'notes.md~'), '# Notes, saved\n');
      renameSync(join(root, 'notes.md~'), join(root, 'notes.md'));
      rmSync(join(root, '.notes.md.swp'));
    });
    // An editor writing beside and renaming, with a temporary name of its own type.
    await expectOneCall(calls, () => {
      writeFileSync(join(root, '.notes.md.tmp-1234'), '# Notes, saved again\n');
      renameSync(join(root, '.notes.md.tmp-1234'), join(root, 'notes.md'));
    });
  });

  it('tells of a burst of 500 files a bounded number of times', async () => {
    const root = folders.make();
    const { calls } = await watching(root);
    mkdirSync(join(root, 'burst'));
    for (let i = 0; i < 500; i += 1) writeFileSync(join(root, 'burst', `f-${i}.md`), `# ${i}\n`);
    await waitFor(() => calls.changed > 0, 'the burst to be told', 5_000);
    await sleep(timing.quietMs + timing.intervalMs + 300);
    expect(calls.changed).toBeGreaterThanOrEqual(1);
    expect(calls.changed).toBeLessThanOrEqual(3);
  });

  it('ignores hidden entries, files the globs refuse and types never imported', async () => {
    const root = folders.make({ 'drafts/a.md': '# A\n' });
    const { calls } = await watching(root, {
      filter: keyFilter(undefined, ['drafts/**', '**/*.txt']),
    });
    writeFileSync(join(root, '.hidden.md'), 'x');
    mkdirSync(join(root, '.git'));
    writeFileSync(join(root, '.git', 'HEAD.md'), 'x');
    writeFileSync(join(root, 'drafts', 'b.md'), 'x');
    writeFileSync(join(root, 'notes.txt'), 'x');
    writeFileSync(join(root, 'image.png'), 'x');
    await sleep(timing.quietMs + 500);
    expect(calls.changed).toBe(0);
    await expectOneCall(calls, () => writeFileSync(join(root, 'wanted.md'), '# Wanted\n'));
  });

  it('fails once, naming the problem, when the folder is removed', async () => {
    const root = folders.make({ 'a.md': '# A\n' });
    const { calls } = await watching(root);
    rmSync(root, { recursive: true });
    await waitFor(() => calls.errors.length > 0, 'the watch to fail', 5_000);
    await sleep(300);
    expect(calls.errors).toEqual([
      `the folder ${root} was removed or moved away: it is no longer watched`,
    ]);
    expect(calls.changed).toBe(0);
  });

  (modesBind ? it : it.skip)(
    'keeps watching the rest of a folder with one it cannot read',
    async () => {
      const root = folders.make({ 'a.md': '# A\n', 'private/x.md': '# X\n' });
      chmodSync(join(root, 'private'), 0o000);
      try {
        const { calls } = await watching(root);
        await expectOneCall(calls, () => writeFileSync(join(root, 'a.md'), '# A, edited\n'));
        expect(calls.errors).toEqual([]);
      } finally {
        chmodSync(join(root, 'private'), 0o755);
      }
    },
  );

  it('fails at once for a folder that does not exist', async () => {
    const root = join(folders.make(), 'missing');
    const { calls } = await watching(root);
    expect(calls.errors).toEqual([`the folder ${root} does not exist: it cannot be watched`]);
  });

  it('calls nothing once stopped, a change pending included', async () => {
    const root = folders.make({ 'a.md': '# A\n' });
    const { calls, watch } = await watching(root);
    writeFileSync(join(root, 'a.md'), '# A, edited\n');
    await sleep(50); // seen, not yet told
    await watch.stop();
    writeFileSync(join(root, 'b.md'), '# B\n');
    await sleep(timing.quietMs + timing.intervalMs + 200);
    expect(calls.changed).toBe(0);
  });

  it("is the folder connector's watch, with the source's globs", async () => {
    const root = folders.make({ 'a.md': '# A\n' });
    const calls = { changed: 0, errors: [] as Error[] };
    const connector = new FolderConnector(
      { path: root, exclude: ['**/*.txt'] },
      { watchTiming: timing },
    );
    const stop = connector.watch(
      () => (calls.changed += 1),
      (error) => calls.errors.push(error),
    );
    try {
      // Not told when the tree is watched: a change is made until one is seen.
      let edits = 0;
      await waitFor(
        () => {
          writeFileSync(join(root, 'a.md'), `# A, edit ${++edits}\n`);
          return calls.changed > 0;
        },
        'a change to be told',
        { timeoutMs: 5_000, intervalMs: timing.quietMs + 100 },
      );
      await sleep(timing.quietMs + timing.intervalMs + 200); // the last edit told too
      const before = calls.changed;
      writeFileSync(join(root, 'notes.txt'), 'excluded');
      await sleep(timing.quietMs + timing.intervalMs + 200);
      expect(calls.changed).toBe(before);
    } finally {
      await stop();
    }
    expect(calls.errors).toEqual([]);
  });

  it('names the system limit of watches when it is reached', () => {
    const error = Object.assign(
      new Error('ENOSPC: System limit for number of file watchers reached'),
      {
        code: 'ENOSPC',
      },
    );
    expect(watchErrorMessage('/data/docs', error)).toBe(
      "the folder /data/docs cannot be watched: the system's limit of watched folders is reached (fs.inotify.max_user_watches)",
    );
  });
});
