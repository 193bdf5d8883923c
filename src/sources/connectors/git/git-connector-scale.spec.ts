import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitConnector } from './git-connector';
import { aContext, aGitSource, knownOf, TEST_ENV, TestRepository } from './git-repository.testing';

/** A repository of 10 000 small files: the first run, the run after no change, after one. */
describe('GitConnector at 10 000 files', () => {
  let repo: TestRepository;

  beforeAll(async () => {
    repo = await TestRepository.create();
    for (let folder = 0; folder < 100; folder++) {
      await mkdir(join(repo.work, `f${folder}`));
      await Promise.all(
        Array.from({ length: 100 }, (_, file) =>
          writeFile(
            join(repo.work, `f${folder}`, `doc-${file}.md`),
            `---\ntitle: Doc ${folder}/${file}\n---\nBody of ${folder}/${file}.\n`,
          ),
        ),
      );
    }
    await repo.commit('ten thousand');
  }, 120_000);

  afterAll(async () => {
    await repo.destroy();
  });

  it('lists, loads, answers unchanged with one ls-remote, and lists again after one change', async () => {
    const commands: string[][] = [];
    const connector = new GitConnector(aGitSource({ url: repo.url }), {
      cacheDir: repo.cacheDir(),
      env: TEST_ENV,
      onCommand: (args) => commands.push([...args]),
    });
    const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
      const started = performance.now();
      const result = await work();
      return [result, Math.round(performance.now() - started)];
    };

    const [first, firstMs] = await timed(() => connector.enumerate(aContext()));
    expect(first.items).toHaveLength(10_000);
    const [documents, loadMs] = await timed(async () => {
      const loaded: Array<{ title?: string }> = [];
      for (let start = 0; start < first.items.length; start += 16) {
        const batch = first.items.slice(start, start + 16).map((item) => item.load!());
        loaded.push(...(await Promise.all(batch)));
      }
      return loaded;
    });
    expect(documents[0].title).toBe('Doc 0/0');
    expect(commands.filter((args) => args[0] === 'cat-file')).toHaveLength(1);

    commands.length = 0;
    const known = knownOf(first.items);
    const [same, unchangedMs] = await timed(() =>
      connector.enumerate(aContext({ known, cursor: first.cursor ?? null })),
    );
    expect(same.unchanged).toBe(true);
    expect(commands.map((args) => args[0])).toEqual(['ls-remote']);

    await repo.write({ 'f0/doc-0.md': 'changed' });
    await repo.commit('one change');
    const [next, nextMs] = await timed(() =>
      connector.enumerate(aContext({ known, cursor: first.cursor ?? null })),
    );
    const changed = next.items.filter((item) => known.get(item.key)?.version !== item.version);
    expect(changed.map((item) => item.key)).toEqual(['f0/doc-0.md']);

    process.stdout.write(
      `git connector, 10 000 files: first enumerate ${firstMs} ms, loading all ${loadMs} ms, ` +
        `unchanged ${unchangedMs} ms, after one change ${nextMs} ms\n`,
    );
  }, 120_000);
});
