import { headOf, isRefName, patternsOf, shortName } from './git-refs';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

describe('isRefName', () => {
  it.each([
    ['main', true],
    ['release/1.0', true],
    ['refs/heads/main', true],
    ['v1.2.3+build', true],
    ['-upload-pack', false],
    ['main:refs/heads/x', false],
    ['main~1', false],
    ['a..b', false],
    ['a//b', false],
    ['a/.hidden', false],
    ['branch.lock', false],
    ['trailing/', false],
    ['with space', false],
    ['HEAD@{1}', false],
  ])('%s → %s', (ref, expected) => {
    expect(isRefName(ref)).toBe(expected);
  });
});

describe('headOf', () => {
  it('follows the branch HEAD names', () => {
    expect(headOf(`ref: refs/heads/trunk\tHEAD\n${A}\tHEAD\n`, undefined)).toEqual({
      ref: 'refs/heads/trunk',
      commit: A,
    });
    expect(headOf(`${A}\tHEAD\n`, undefined)).toEqual({ ref: 'HEAD', commit: A });
    expect(headOf('', undefined)).toBeNull();
  });

  it('prefers a branch to a tag of the same name, and peels an annotated tag', () => {
    expect(
      headOf(`${A}\trefs/heads/v1\n${B}\trefs/tags/v1\n${C}\trefs/tags/v1^{}\n`, 'v1'),
    ).toEqual({
      ref: 'refs/heads/v1',
      commit: A,
    });
    expect(headOf(`${B}\trefs/tags/v1\n${C}\trefs/tags/v1^{}\n`, 'v1')).toEqual({
      ref: 'refs/tags/v1',
      commit: C,
    });
    expect(headOf(`${A}\trefs/heads/x/main\n`, 'main')).toBeNull();
  });
});

describe('patternsOf and shortName', () => {
  it('asks for a branch or a tag, or the full ref named', () => {
    expect(patternsOf('main')).toEqual([
      'refs/heads/main',
      'refs/heads/main^{}',
      'refs/tags/main',
      'refs/tags/main^{}',
    ]);
    expect(patternsOf('refs/notes/x')).toEqual(['refs/notes/x', 'refs/notes/x^{}']);
    expect(shortName('refs/heads/release/1.0')).toBe('release/1.0');
    expect(shortName('HEAD')).toBe('HEAD');
  });
});
