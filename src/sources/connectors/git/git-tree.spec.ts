import { listingOf, movesByHash, parseTree, renamesOf, type TreeEntry } from './git-tree';

const HASH = 'c1b0730e013447badcfd47fd144e254807b06e1d';

/** An `ls-tree -r -z --long` record. */
function record(mode: string, type: string, size: string, path: string | Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`${mode} ${type} ${HASH} ${size.padStart(7)}\t`),
    Buffer.isBuffer(path) ? path : Buffer.from(path),
    Buffer.from([0]),
  ]);
}

function anEntry(path: string, overrides: Partial<TreeEntry> = {}): TreeEntry {
  return { mode: '100644', type: 'blob', hash: HASH, size: 10, path, shown: path, ...overrides };
}

const rules = { folder: '', wanted: () => true, maxBodyBytes: 100 };

describe('parseTree', () => {
  it('reads blobs, links and submodules, names with tabs and spaces, names that are not UTF-8', () => {
    const output = Buffer.concat([
      record('100644', 'blob', '12', 'sp ace/tab\tname.md'),
      record('120000', 'blob', '9', 'link.md'),
      record('160000', 'commit', '-', 'vendor/lib'),
      record('100644', 'blob', '1', Buffer.from([0x62, 0xff, 0x2e, 0x6d, 0x64])),
    ]);

    expect(parseTree(output)).toEqual([
      anEntry('sp ace/tab\tname.md', { size: 12 }),
      anEntry('link.md', { mode: '120000', size: 9 }),
      anEntry('vendor/lib', { mode: '160000', type: 'commit', size: null }),
      { ...anEntry('b\ufffd.md', { size: 1 }), path: null },
    ]);
    expect(parseTree(Buffer.alloc(0))).toEqual([]);
  });

  it('fails on a record it does not understand', () => {
    expect(() => parseTree(Buffer.from('garbage\0'))).toThrow('git ls-tree wrote an entry');
  });
});

describe('listingOf', () => {
  it('keys the blobs under the folder by their path below it', () => {
    const listing = listingOf([anEntry('docs/a.md'), anEntry('docs-old/b.md'), anEntry('c.md')], {
      ...rules,
      folder: 'docs',
    });

    expect(listing).toEqual({
      blobs: [{ key: 'a.md', path: 'docs/a.md', hash: HASH, size: 10 }],
      skipped: [],
    });
  });

  it('says why each entry that is not a document is left out, a hidden folder once', () => {
    const listing = listingOf(
      [
        anEntry('.git-crypt/a.md'),
        anEntry('.git-crypt/b.md'),
        anEntry('a/.obsidian/c.md'),
        anEntry('bell\u0007.md'),
        { ...anEntry('b\ufffd.md'), path: null },
        anEntry('link.md', { mode: '120000' }),
        anEntry('vendor/lib', { mode: '160000', type: 'commit', size: null }),
        anEntry('image.png'),
        anEntry('large.md', { size: 101 }),
        anEntry('large.html', { size: 101 }),
        anEntry('unwanted.md'),
      ],
      { ...rules, wanted: (key) => key !== 'unwanted.md' },
    );

    expect(listing.blobs.map((blob) => blob.key)).toEqual(['large.html']);
    expect(listing.skipped).toEqual([
      { key: '.git-crypt', reason: 'hidden' },
      { key: 'a/.obsidian', reason: 'hidden' },
      {
        key: '"bell\\u0007.md"',
        reason: 'its name holds a control character or a backslash, which no id may',
      },
      { key: '"b\ufffd.md"', reason: 'its name is not UTF-8' },
      { key: 'link.md', reason: 'a symbolic link (not followed)' },
      { key: 'vendor/lib', reason: 'a submodule (not followed)' },
      { key: 'image.png', reason: 'not a type that is imported (.png)' },
      { key: 'large.md', reason: '101 bytes, over the body limit of 100' },
    ]);
  });
});

describe('renamesOf', () => {
  it('takes the renames of diff-tree --name-status -z and passes over the rest', () => {
    const output = Buffer.from(
      [
        'M',
        'a.md',
        'R100',
        'old.md',
        'new.md',
        'C075',
        'x.md',
        'y.md',
        'D',
        'gone.md',
        'R087',
        'sp ace/t\tb.md',
        'z.md',
        '',
      ].join('\0'),
    );

    expect(renamesOf(output)).toEqual([
      { from: 'old.md', to: 'new.md' },
      { from: 'sp ace/t\tb.md', to: 'z.md' },
    ]);
    expect(renamesOf(Buffer.alloc(0))).toEqual([]);
  });
});

describe('movesByHash', () => {
  const blob = (key: string, hash: string) => ({ key, path: key, hash, size: 1 });

  it('pairs a gone key with the one new key holding its blob, and leaves ambiguous copies', () => {
    const known = new Map([
      ['a.md', { version: 'h1' }],
      ['b.md', { version: 'h2' }],
      ['c.md', { version: 'h3' }],
      ['d.md', { version: 'h3' }],
      ['kept.md', { version: 'h4' }],
    ]);
    const blobs = [
      blob('moved/a.md', 'h1'),
      blob('b1.md', 'h2'),
      blob('b2.md', 'h2'),
      blob('cd.md', 'h3'),
      blob('kept.md', 'h4'),
      blob('copy.md', 'h4'),
    ];
    const present = new Set(blobs.map((entry) => entry.key));

    expect(movesByHash(known, present, blobs)).toEqual([{ from: 'a.md', to: 'moved/a.md' }]);
  });
});
