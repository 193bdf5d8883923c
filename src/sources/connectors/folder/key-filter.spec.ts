import { keyFilter } from './key-filter';

describe('keyFilter', () => {
  it.each([
    // include, exclude, key, wanted
    [undefined, undefined, 'a.md', true],
    [[], [], 'deep/down/a.md', true],
    [['**/*.md'], undefined, 'a.md', true],
    [['**/*.md'], undefined, 'guides/a.md', true],
    [['**/*.md'], undefined, 'guides/a.txt', false],
    [['guides/**'], undefined, 'guides/x/a.md', true],
    [['guides/**'], undefined, 'other/a.md', false],
    [undefined, ['drafts/**'], 'drafts/a.md', false],
    [undefined, ['drafts/**'], 'drafts/deep/a.md', false],
    [undefined, ['drafts/**'], 'published/drafts.md', true],
    [['**/*.md'], ['**/README.md'], 'x/README.md', false],
    [['**/*.md'], ['**/README.md'], 'x/GUIDE.md', true],
    // dot: false: a glob's wildcards never match a hidden name.
    [['**/*.md'], undefined, 'x/.hidden.md', false],
  ] as const)('include %j exclude %j: %s → %s', (include, exclude, key, wanted) => {
    expect(keyFilter(include, exclude).wants(key)).toBe(wanted);
  });

  it.each([
    [['drafts/**'], 'drafts', true],
    [['drafts/**'], 'drafts/old', true],
    [['drafts/**'], 'published', false],
    [['**/node_modules/**'], 'a/b/node_modules', true],
    [['**/node_modules/**'], 'a/b', false],
    // Only a glob that ends in /** excludes a whole folder: *.md under it may still be wanted.
    [['drafts/*.md'], 'drafts', false],
    [['**/node_modules'], 'node_modules', false],
    [undefined, 'anything', false],
  ] as const)('exclude %j leaves the folder %s out: %s', (exclude, folder, out) => {
    expect(keyFilter(undefined, exclude).leavesOut(folder)).toBe(out);
  });

  it('leaves out only folders whose every file the excludes would refuse', () => {
    const filter = keyFilter(undefined, ['drafts/**', 'a/**/tmp/**']);
    for (const folder of ['drafts', 'a/tmp', 'a/b/c/tmp']) {
      expect(filter.leavesOut(folder)).toBe(true);
      expect(filter.wants(`${folder}/x.md`)).toBe(false);
      expect(filter.wants(`${folder}/deeper/x.md`)).toBe(false);
    }
  });
});
