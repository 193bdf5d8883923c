import { extractLinks } from './markdown-links';
import { backlinkKeys, nearest, resolve, type Candidates } from './link-resolution';
import { documentKeys, keysOf, nameOf, targetOf, titleKey, type LinkTarget } from './link-targets';
import { LINK_SEPARATOR, linkRowOf } from './link-row';
import { passageAround } from './link-passage';

/** What the first link of `body`, written in `source`, asks for. */
function asked(body: string, source = 'notes/daily/today.md'): LinkTarget | null {
  return targetOf(extractLinks(body)[0], source);
}

/** Candidates as a lookup would find them among `alive`, titled by `titles`. */
function among(alive: string[], titles: Record<string, string> = {}): Candidates {
  const byName = new Map<string, string[]>();
  const byTitle = new Map<string, string[]>();
  for (const id of alive) {
    byName.set(nameOf(id), [...(byName.get(nameOf(id)) ?? []), id]);
    const title = titleKey(titles[id] ?? id.slice(id.lastIndexOf('/') + 1));
    byTitle.set(title, [...(byTitle.get(title) ?? []), id]);
  }
  return { ids: new Set(alive), byName, byTitle };
}

describe('targetOf', () => {
  it('reads explicit paths as ids, relative to the linking document or from the root', () => {
    expect(asked('[x](../ops/backup.md)')).toEqual({ rule: 'id', id: 'notes/ops/backup.md' });
    expect(asked('[x](./a/b.md#top)')).toEqual({ rule: 'id', id: 'notes/daily/a/b.md' });
    expect(asked('[x](/ops/backup.md)')).toEqual({ rule: 'id', id: 'ops/backup.md' });
    expect(asked('kb://ops/Backup%20plan.md')).toEqual({ rule: 'id', id: 'ops/Backup plan.md' });
    expect(asked('[x](<kb://a/b>)')).toEqual({ rule: 'id', id: 'a/b' });
  });

  it('reads other paths and wikilinks as tails of ids, wikilinks with a title', () => {
    expect(asked('[x](ops/Backup.md)')).toEqual({
      rule: 'path',
      suffix: 'ops/backup',
      title: null,
    });
    expect(asked('[[Backup  Runbook|the runbook]]')).toEqual({
      rule: 'path',
      suffix: 'backup  runbook',
      title: 'backup runbook',
    });
  });

  it("resolves `.` and `..` as walking the segments from the linking document's folder", () => {
    // The walk, segment by segment: `..` goes up (nothing is above the top), `.` and empty
    // segments stay; the top itself is no document.
    const walked = (written: string, source: string): string | null => {
      const folder = source.split('/').slice(0, -1);
      for (const segment of written.split('/')) {
        if (segment === '..') {
          if (folder.length === 0) return null;
          folder.pop();
        } else if (segment !== '.' && segment !== '') folder.push(segment);
      }
      return folder.join('/');
    };
    const written = ['../x.md', '../../x.md', '../../../x.md', './x.md', './../x.md', '.././x.md'];
    written.push('../a/../x.md', '../x/./y.md', '../x//y.md', './/x.md', '../x/..', '../x/y.md');
    for (const source of ['top.md', 'a/doc.md', 'a/b/doc.md', 'a/b/c/doc.md']) {
      for (const path of written) {
        const target = targetOf(extractLinks(`[x](${path})`)[0], source);
        const id = walked(path, source);
        expect([path, source, target]).toEqual([
          path,
          source,
          id === null || id === '' ? null : { rule: 'id', id },
        ]);
      }
    }
  });

  it('names no document for external URLs, folders, paths above the root and empty targets', () => {
    for (const body of [
      '[x](https://example.com/a.md)',
      '[x](mailto:a@example.com)',
      '[x](//cdn.example.com/a)',
      '[x](../ops/)',
      '[x](../../../../up.md)',
      '[x](#heading)',
    ]) {
      expect(asked(body)).toBeNull();
    }
  });

  it('gives the keys kb_links finds links by, one a link where one is enough', () => {
    expect(keysOf({ rule: 'id', id: 'a/b.md' })).toEqual(['=a/b.md']);
    expect(keysOf({ rule: 'path', suffix: 'a/b', title: null })).toEqual(['~a/b']);
    expect(keysOf({ rule: 'path', suffix: 'a/b', title: 'a/b' })).toEqual(['%a/b']);
    expect(keysOf(asked('[[a/b.md]]')!)).toEqual(['~a/b', '@a/b.md']);
    expect(documentKeys('Notes/Ops/Backup.md', 'Backup  runbook')).toEqual({
      id: '=Notes/Ops/Backup.md',
      twin: '=Notes/Ops/Backup',
      suffixes: ['notes/ops/backup', 'ops/backup', 'backup'],
      title: 'backup runbook',
      all: [
        '=Notes/Ops/Backup.md',
        '=Notes/Ops/Backup',
        '~notes/ops/backup',
        '%notes/ops/backup',
        '~ops/backup',
        '%ops/backup',
        '~backup',
        '%backup',
        '@backup runbook',
        '%backup runbook',
      ],
    });
  });

  it('makes one row of keys and texts per body, none without links', () => {
    expect(linkRowOf('a/x.md', 'no links here')).toBeNull();
    expect(linkRowOf('a/x.md', '[only](https://example.com)')).toBeNull();
    expect(linkRowOf('a/x.md', 'See [b](b.md), [[C|see\u0001c]] and kb://d.md')).toEqual({
      keys: ['~b', '%c', '=d.md'].join(LINK_SEPARATOR),
      labels: ['b', 'see c', 'kb://d.md'].join(LINK_SEPARATOR),
    });
  });
});

describe('resolve', () => {
  const alive = [
    'notes/daily/ops/backup.md',
    'notes/ops/backup.md',
    'ops/backup.md',
    'notes/ops/restore',
    'other/deep/ops/backup.md',
  ];

  it('takes an id, else its twin with or without .md', () => {
    const c = among(alive);
    expect(resolve({ rule: 'id', id: 'ops/backup.md' }, 'x.md', c)).toBe('ops/backup.md');
    expect(resolve({ rule: 'id', id: 'ops/backup' }, 'x.md', c)).toBe('ops/backup.md');
    expect(resolve({ rule: 'id', id: 'notes/ops/restore.md' }, 'x.md', c)).toBe(
      'notes/ops/restore',
    );
    expect(resolve({ rule: 'id', id: 'nowhere.md' }, 'x.md', c)).toBeNull();
  });

  it('takes the nearest document a path ends with: the linking folder, then each above', () => {
    const c = among(alive);
    const path = asked('[[ops/backup]]')!;
    expect(resolve(path, 'notes/daily/today.md', c)).toBe('notes/daily/ops/backup.md');
    expect(resolve(path, 'notes/weekly/w1.md', c)).toBe('notes/ops/backup.md');
    expect(resolve(path, 'top.md', c)).toBe('ops/backup.md');
    expect(resolve(path, 'other/x.md', c)).toBe('other/deep/ops/backup.md');
    expect(resolve(asked('[[BACKUP]]')!, 'elsewhere/x.md', c)).toBe('ops/backup.md');
    expect(resolve(asked('[[pkg/backup]]')!, 'x.md', c)).toBeNull();
  });

  it('falls back on titles for wikilinks, the nearest of several', () => {
    const c = among(['a/runbook-1.md', 'b/x/runbook-2.md', 'b/runbook-3.md'], {
      'a/runbook-1.md': 'Backup runbook',
      'b/x/runbook-2.md': 'Backup Runbook',
      'b/runbook-3.md': 'Restore runbook',
    });
    expect(resolve(asked('[[Backup runbook]]')!, 'a/z.md', c)).toBe('a/runbook-1.md');
    expect(resolve(asked('[[backup runbook]]')!, 'b/z.md', c)).toBe('b/x/runbook-2.md');
    expect(resolve(asked('[x](Backup%20runbook)')!, 'a/z.md', c)).toBeNull();
  });

  it('breaks ties by the shortest id, then byte order', () => {
    expect(nearest('z/x.md', ['b/b/a.md', 'a/a.md', 'c/a.md'])).toBe('a/a.md');
  });
});

describe('backlinkKeys', () => {
  it('finds every link to a document whose path and title are its own, from anywhere', () => {
    const c = among(['ops/backup.md'], { 'ops/backup.md': 'Backup runbook' });
    expect(backlinkKeys('ops/backup.md', 'Backup runbook', c)).toEqual({
      always: [
        '=ops/backup.md',
        '=ops/backup',
        '~ops/backup',
        '%ops/backup',
        '~backup',
        '%backup',
        '@backup runbook',
        '%backup runbook',
      ],
      nearest: [],
    });
  });

  it('keeps keys shared with other documents for the documents nearer to it', () => {
    const c = among(['a/backup.md', 'b/backup.md', 'b/backup'], {
      'a/backup.md': 'Backup',
      'b/backup.md': 'Backup',
    });
    const keys = backlinkKeys('a/backup.md', 'Backup', c);
    expect(keys.always).toEqual(['=a/backup.md', '=a/backup', '~a/backup', '%a/backup']);
    expect(keys.nearest.map((n) => [n.key, n.rivals])).toEqual([
      ['~backup', ['a/backup.md', 'b/backup.md', 'b/backup']],
      ['%backup', ['a/backup.md', 'b/backup.md', 'b/backup']],
    ]);
    // A path takes the title's links: `[[Backup]]` resolves by path before titles are tried.
    expect(keys.always).not.toContain('@backup');
    // `b/backup` exists: a link to `b/backup` is its, and to `b/backup.md` its twin's.
    expect(backlinkKeys('b/backup.md', 'Backup', c).always).not.toContain('=b/backup');
  });
});

describe('passageAround', () => {
  it('gives the paragraph of the link, white space collapsed', () => {
    const body = '# T\n\nFirst paragraph.\n\nSee the\n[runbook](r.md) now.\n\nLast.';
    const start = body.indexOf('[runbook]');
    expect(passageAround(body, start, start + 15)).toBe('See the [runbook](r.md) now.');
  });

  it('cuts a long paragraph around the link at word boundaries', () => {
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`);
    words[100] = '[x](y.md)';
    const body = words.join(' ');
    const start = body.indexOf('[x]');
    const passage = passageAround(body, start, start + 9);
    expect(passage.startsWith('…w')).toBe(true);
    expect(passage.endsWith('…')).toBe(true);
    expect(passage).toContain(' w99 [x](y.md) w101 ');
    expect(passage.length).toBeLessThanOrEqual(260);
  });
});
