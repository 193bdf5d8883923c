import { rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GitSourceDeclaration } from '../../source-declaration';
import type { Enumeration } from '../connector';
import { GitConnector } from './git-connector';
import { aContext, aGitSource, knownOf, TEST_ENV, TestRepository } from './git-repository.testing';

/** A connector on the test repository, and the git commands it runs (their arguments). */
function connect(
  repo: TestRepository,
  overrides: Partial<GitSourceDeclaration> = {},
  cache = 'cache',
): { connector: GitConnector; commands: string[][] } {
  const commands: string[][] = [];
  const connector = new GitConnector(aGitSource({ url: repo.url, ...overrides }), {
    cacheDir: repo.cacheDir(cache),
    env: TEST_ENV,
    onCommand: (args) => commands.push([...args]),
  });
  return { connector, commands };
}

function keysOf(result: Enumeration): string[] {
  return result.items.map((item) => item.key);
}

function versionOf(result: Enumeration, key: string): string | undefined {
  return result.items.find((item) => item.key === key)?.version;
}

async function loadOf(result: Enumeration, key: string) {
  const item = result.items.find((candidate) => candidate.key === key);
  if (item?.load === undefined) throw new Error(`no item ${key}`);
  return item.load();
}

/** The next run's context after a complete run: its items known, its cursor kept. */
function after(result: Enumeration) {
  return aContext({ known: knownOf(result.items), cursor: result.cursor ?? null });
}

describe('GitConnector', () => {
  let repo: TestRepository;

  beforeEach(async () => {
    repo = await TestRepository.create();
  });

  afterEach(async () => {
    await repo.destroy();
  });

  it('lists the blobs of the head commit, each versioned by its hash, and loads them as import does', async () => {
    await repo.write({
      'README.md': '# Readme\n',
      'guides/setup.md': '---\ntitle: Setup\ntags: [ops]\nowner: ada\n---\nSteps.\n',
      'guides/page.html': '<h1>Page</h1><p>Text</p>',
      'images/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    });
    const commit = await repo.commit('first');
    const { connector } = connect(repo);

    const result = await connector.enumerate(aContext());

    expect(result).toMatchObject({
      complete: true,
      cursor: commit,
      version: `main@${commit.slice(0, 7)}`,
      moves: [],
      failed: [],
      skipped: [{ key: 'images/logo.png', reason: 'not a type that is imported (.png)' }],
    });
    expect(result.unchanged).toBeUndefined();
    expect(result.items.map(({ key, version, uri }) => ({ key, version, uri }))).toEqual([
      {
        key: 'README.md',
        version: await repo.blob(commit, 'README.md'),
        uri: `${repo.url}@${commit}:README.md`,
      },
      {
        key: 'guides/page.html',
        version: await repo.blob(commit, 'guides/page.html'),
        uri: `${repo.url}@${commit}:guides/page.html`,
      },
      {
        key: 'guides/setup.md',
        version: await repo.blob(commit, 'guides/setup.md'),
        uri: `${repo.url}@${commit}:guides/setup.md`,
      },
    ]);
    await expect(loadOf(result, 'guides/setup.md')).resolves.toEqual({
      body: 'Steps.\n',
      title: 'Setup',
      tags: ['ops'],
      metadata: { owner: 'ada' },
    });
    // Read as a fetched page is: Readability, finding no <main>, makes the heading a second level.
    await expect(loadOf(result, 'guides/page.html')).resolves.toEqual({
      body: '## Page\n\nText',
      title: 'Page',
      metadata: { source_type: 'html' },
    });
    await expect(loadOf(result, 'README.md')).resolves.toEqual({ body: '# Readme\n' });
  });

  it('answers unchanged after one ls-remote when the head has not moved: nothing fetched, nothing read', async () => {
    await repo.write({ 'a.md': 'A' });
    const commit = await repo.commit('first');
    const first = await connect(repo).connector.enumerate(aContext());
    const { connector, commands } = connect(repo);

    const result = await connector.enumerate(after(first));

    expect(result).toEqual({
      complete: true,
      unchanged: true,
      cursor: commit,
      version: `main@${commit.slice(0, 7)}`,
      items: [],
      failed: [],
      skipped: [],
    });
    expect(commands).toEqual([['ls-remote', '--symref', '--', repo.url, 'HEAD']]);
  });

  it('follows a declared branch or tag, an annotated tag by the commit it names', async () => {
    await repo.write({ 'a.md': 'A' });
    const tagged = await repo.commit('tagged');
    await repo.git(repo.work, 'tag', '-a', 'v1', '-m', 'release');
    await repo.git(repo.work, 'push', '--quiet', 'origin', 'v1');
    await repo.write({ 'b.md': 'B' });
    const draft = await repo.commit('draft', { branch: 'draft' });

    const release = await connect(repo, { ref: 'v1' }).connector.enumerate(aContext());
    const branch = await connect(repo, { ref: 'draft' }).connector.enumerate(aContext());

    expect(release).toMatchObject({ cursor: tagged, version: `v1@${tagged.slice(0, 7)}` });
    expect(keysOf(release)).toEqual(['a.md']);
    expect(branch).toMatchObject({ cursor: draft, version: `draft@${draft.slice(0, 7)}` });
    expect(keysOf(branch)).toEqual(['a.md', 'b.md']);
  });

  it('changes the version of the changed files only, and lists what was added and not what was deleted', async () => {
    await repo.write({ 'keep.md': 'same', 'edit.md': 'before', 'gone.md': 'bye' });
    await repo.commit('first');
    const first = await connect(repo).connector.enumerate(aContext());
    await repo.write({ 'edit.md': 'after', 'new.md': 'hello' });
    await repo.remove('gone.md');
    await repo.commit('second');

    const second = await connect(repo).connector.enumerate(after(first));

    expect(keysOf(second)).toEqual(['edit.md', 'keep.md', 'new.md']);
    expect(versionOf(second, 'keep.md')).toBe(versionOf(first, 'keep.md'));
    expect(versionOf(second, 'edit.md')).not.toBe(versionOf(first, 'edit.md'));
    await expect(loadOf(second, 'edit.md')).resolves.toEqual({ body: 'after' });
    expect(second.moves).toEqual([]);
  });

  it('reports a rename of a known file as a move, with or without an edit', async () => {
    const text = 'A paragraph long enough for git to find it again once moved.\n'.repeat(5);
    await repo.write({ 'old.md': text, 'edited.md': text + 'one\n', 'other.md': 'other' });
    await repo.commit('first');
    const first = await connect(repo).connector.enumerate(aContext());
    await repo.move('old.md', 'guides/new.md');
    await repo.move('edited.md', 'renamed.md');
    await repo.write({ 'renamed.md': text + 'two\n' });
    await repo.commit('rename');
    const known = knownOf(first.items);
    known.delete('edited.md');

    const second = await connect(repo).connector.enumerate(
      aContext({ known, cursor: first.cursor ?? null }),
    );

    expect(second.moves).toEqual([{ from: 'old.md', to: 'guides/new.md' }]);
    const withEdit = await connect(repo).connector.enumerate(after(first));
    expect(withEdit.moves).toEqual(
      expect.arrayContaining([
        { from: 'old.md', to: 'guides/new.md' },
        { from: 'edited.md', to: 'renamed.md' },
      ]),
    );
    expect(versionOf(withEdit, 'guides/new.md')).toBe(versionOf(first, 'old.md'));
  });

  it('lists the new history in full after a force-push, moves by equal content when the old commit is unknown', async () => {
    await repo.write({ 'a.md': 'alpha', 'b.md': 'beta' });
    await repo.commit('first');
    const first = await connect(repo).connector.enumerate(aContext());
    await repo.git(repo.work, 'checkout', '--quiet', '--orphan', 'rewritten');
    await repo.git(repo.work, 'rm', '--quiet', '-r', '--cached', '.');
    await repo.remove('a.md', 'b.md');
    await repo.write({ 'moved/a.md': 'alpha', 'c.md': 'gamma' });
    const rewritten = await repo.commit('rewritten', { force: true });

    // A cache that never had the old commit (a fresh one, or one pruned since).
    const { connector, commands } = connect(repo, {}, 'fresh');
    const fresh = await connector.enumerate(after(first));
    // A cursor that names no commit at all.
    const garbage = await connect(repo, {}, 'other').connector.enumerate(
      aContext({ known: knownOf(first.items), cursor: '0'.repeat(40) }),
    );
    // The cache of the earlier run, which still has the old tree to compare.
    const cached = await connect(repo).connector.enumerate(after(first));

    for (const result of [fresh, garbage, cached]) {
      expect(result).toMatchObject({ complete: true, cursor: rewritten });
      expect(keysOf(result)).toEqual(['c.md', 'moved/a.md']);
      expect(result.moves).toEqual([{ from: 'a.md', to: 'moved/a.md' }]);
    }
    expect(commands.map((args) => args[0])).not.toContain('diff-tree');
    await expect(loadOf(fresh, 'c.md')).resolves.toEqual({ body: 'gamma' });
  });

  it('names a ref the remote does not have, and a remote without a default branch', async () => {
    await repo.write({ 'a.md': 'A' });
    await repo.commit('first');
    const empty = await TestRepository.create();

    await expect(connect(repo, { ref: 'nope' }).connector.enumerate(aContext())).rejects.toThrow(
      `the ref nope does not exist in ${repo.url}`,
    );
    await expect(connect(empty).connector.enumerate(aContext())).rejects.toThrow(
      `${empty.url} has no default branch to follow`,
    );
    await expect(
      connect(repo, { ref: '--upload-pack=touch /tmp/x' }).connector.enumerate(aContext()),
    ).rejects.toThrow('is not a branch or tag name');
    await empty.destroy();
  });

  it('skips submodules, symbolic links (never followed out of the tree), hidden files and unusable names', async () => {
    await writeFile(join(repo.root, 'secret.md'), 'SECRET outside the repository');
    await repo.symlink('docs/absolute.md', join(repo.root, 'secret.md'));
    await repo.symlink('docs/relative.md', '../../secret.md');
    await repo.write({
      'docs/page.md': 'page',
      '.github/notes.md': 'hidden folder',
      '.github/more.md': 'hidden folder',
      'docs/.draft.md': 'hidden file',
      'docs/back\\slash.md': 'unusable',
    });
    await repo.git(repo.work, 'add', '--all');
    const submodule = 'a'.repeat(40);
    await repo.git(
      repo.work,
      'update-index',
      '--add',
      '--cacheinfo',
      `160000,${submodule},vendor/lib`,
    );
    await repo.commit('first', { stage: false });
    const { connector, commands } = connect(repo);

    const result = await connector.enumerate(aContext());

    expect(keysOf(result)).toEqual(['docs/page.md']);
    expect(result.skipped).toEqual([
      { key: '.github', reason: 'hidden' },
      { key: 'docs/.draft.md', reason: 'hidden' },
      { key: 'docs/absolute.md', reason: 'a symbolic link (not followed)' },
      {
        key: '"docs/back\\\\slash.md"',
        reason: 'its name holds a control character or a backslash, which no id may',
      },
      { key: 'docs/relative.md', reason: 'a symbolic link (not followed)' },
      { key: 'vendor/lib', reason: 'a submodule (not followed)' },
    ]);
    expect(result.complete).toBe(true);
    expect(commands.map((args) => args[0])).not.toContain('cat-file');
  });

  it('skips a file over the body limit without reading it', async () => {
    await repo.write({ 'small.md': 'small', 'big.md': '' });
    // 200 MB of a sparse file: git stores it compressed to almost nothing.
    await truncate(join(repo.work, 'big.md'), 200 * 1024 * 1024);
    await repo.git(repo.work, 'add', '--all');
    const blob = (await repo.git(repo.work, 'rev-parse', ':big.md')).trim();
    await repo.git(repo.work, 'update-index', '--add', '--cacheinfo', `100644,${blob},big.pdf`);
    await repo.commit('big', { stage: false });
    const { connector, commands } = connect(repo);

    const result = await connector.enumerate(aContext({ maxBodyBytes: 1024 * 1024 }));

    expect(keysOf(result)).toEqual(['small.md']);
    expect(result.skipped).toEqual([
      { key: 'big.md', reason: '209715200 bytes, over the body limit of 1048576' },
      { key: 'big.pdf', reason: '209715200 bytes, over 67108864 for a file to convert' },
    ]);
    await expect(loadOf(result, 'small.md')).resolves.toEqual({ body: 'small' });
    expect(commands.filter((args) => args[0] === 'cat-file')).toEqual([['cat-file', '--batch']]);
  }, 120_000);

  it('keeps to the declared folder and the include and exclude globs', async () => {
    await repo.write({
      'outside.md': 'outside',
      'docs/a.md': 'A',
      'docs/b.txt': 'B',
      'docs/drafts/c.md': 'C',
      'docs/guides/d.md': 'D',
    });
    const commit = await repo.commit('first');

    const all = await connect(repo, { path: 'docs' }).connector.enumerate(aContext());
    const some = await connect(repo, {
      path: '/docs/',
      include: ['**/*.md'],
      exclude: ['drafts/**'],
    }).connector.enumerate(aContext());

    expect(keysOf(all)).toEqual(['a.md', 'b.txt', 'drafts/c.md', 'guides/d.md']);
    expect(all.items[0].uri).toBe(`${repo.url}@${commit}:docs/a.md`);
    expect(keysOf(some)).toEqual(['a.md', 'guides/d.md']);
    expect(some.skipped).toEqual([]);
    await expect(
      connect(repo, { path: 'missing' }).connector.enumerate(aContext()),
    ).rejects.toThrow(
      `the folder missing does not exist in ${repo.url} at main@${commit.slice(0, 7)}`,
    );
    await expect(
      connect(repo, { path: 'outside.md' }).connector.enumerate(aContext()),
    ).rejects.toThrow('the folder outside.md does not exist');
  });

  it('reports a move within the folder only, from a known key', async () => {
    await repo.write({ 'docs/a.md': 'alpha', 'docs/b.md': 'beta', 'c.md': 'gamma' });
    await repo.commit('first');
    const first = await connect(repo, { path: 'docs' }).connector.enumerate(aContext());
    await repo.move('docs/a.md', 'docs/sub/a.md');
    await repo.move('docs/b.md', 'b.md');
    await repo.move('c.md', 'docs/c.md');
    await repo.commit('moves');

    const second = await connect(repo, { path: 'docs' }).connector.enumerate(after(first));

    expect(keysOf(second)).toEqual(['c.md', 'sub/a.md']);
    expect(second.moves).toEqual([{ from: 'a.md', to: 'sub/a.md' }]);
  });

  it('fails naming the limit when the folder holds more files than a source may', async () => {
    await repo.write({ 'a.md': 'A', 'b.md': 'B', 'c.md': 'C' });
    await repo.commit('first');
    const connector = new GitConnector(aGitSource({ url: repo.url }), {
      cacheDir: repo.cacheDir(),
      env: TEST_ENV,
      maxItems: 2,
    });

    await expect(connector.enumerate(aContext())).rejects.toThrow(
      /^3 files to sync at main@[0-9a-f]{7}, over the 2 a source may hold/,
    );
  });

  it('rejects a load whose blob the cache no longer holds, naming it', async () => {
    await repo.write({ 'a.md': 'A' });
    await repo.commit('first');
    const result = await connect(repo).connector.enumerate(aContext());
    await rm(repo.cacheDir(), { recursive: true });
    await repo.git(repo.root, 'init', '--quiet', '--bare', repo.cacheDir());

    await expect(loadOf(result, 'a.md')).rejects.toThrow(
      /^the blob [0-9a-f]{40} is not in the cache/,
    );
  });
});
