import { documentPath } from './document-path';

describe('documentPath', () => {
  it.each([
    ['kb/a b/c.md', '', '/documents/kb/a%20b/c.md'],
    ['notes/history', '', '/documents/notes%2Fhistory'],
    ['notes/History', '/move', '/documents/notes%2FHistory/move'],
    ['a/b/neighbourhood', '/links', '/documents/a/b%2Fneighbourhood/links'],
    ['links/broken', '', '/documents/links%2Fbroken'],
    ['changes', '', '/documents/%63hanges'],
    ['Folders', '', '/documents/%46olders'],
    ['bulk', '/history', '/documents/%62ulk/history'],
    ['readme', '', '/documents/readme'],
  ])('%s%s → %s', (id, suffix, path) => {
    expect(documentPath(id, suffix)).toBe(path);
  });
});
