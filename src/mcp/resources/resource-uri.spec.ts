import { DomainError } from '../../common/domain-error';
import { documentUri, folderUri, parseResourceUri } from './resource-uri';

describe('kb:// resource URIs', () => {
  it.each([
    ['knowledge/topic/page.md', 'kb://knowledge/topic/page.md'],
    ['a b/c.md', 'kb://a%20b/c.md'],
    ['100%/x?.md', 'kb://100%25/x%3F.md'],
    ['notes/#1.md', 'kb://notes/%231.md'],
    ['wiki/Grüße.md', 'kb://wiki/Gr%C3%BC%C3%9Fe.md'],
    ["ops/(draft)+v2;a=b,c@d:e!$&'*~.md", "kb://ops/(draft)+v2;a=b,c@d:e!$&'*~.md"],
    ['emoji/😀.md', 'kb://emoji/%F0%9F%98%80.md'],
  ])('%p ↔ %p', (id, uri) => {
    expect(documentUri(id)).toBe(uri);
    expect(parseResourceUri(uri)).toEqual({ kind: 'document', documentId: id });
  });

  it('names folders with a trailing slash', () => {
    expect(folderUri('knowledge/reports')).toBe('kb://knowledge/reports/');
    expect(parseResourceUri('kb://knowledge/reports/')).toEqual({
      kind: 'folder',
      folder: 'knowledge/reports',
    });
  });

  it('reads what a reserved template expansion produces (unencoded ? and #, any scheme case)', () => {
    expect(parseResourceUri('kb://faq/why?.md')).toEqual({
      kind: 'document',
      documentId: 'faq/why?.md',
    });
    expect(parseResourceUri('KB://a/b c.md')).toEqual({ kind: 'document', documentId: 'a/b c.md' });
  });

  it.each([
    ['https://example.com/a.md', /^uri: must be a kb:\/\/ URI/],
    ['kb:/a.md', /^uri: must be a kb:\/\/ URI/],
    ['kb://', /^uri: must not be empty/],
    ['kb:///', /^uri: names no folder/],
    ['kb://a/%E0%A4%A.md', /^uri: holds a malformed percent-encoding/],
    ['kb://a//b.md', /^uri: must not contain an empty segment/],
    ['kb://a/../b.md', /^uri: must not contain a "\.\." segment/],
    ['kb:///a.md', /^uri: must not start or end with "\/"/],
    ['kb://a/%00.md', /^uri: must not contain control characters/],
    ['kb://a\\b.md', /^uri: must not contain control characters or a backslash/],
    ['kb://a//', /^uri: must not start or end with "\/"/],
  ])('refuses %p naming the problem', (uri, message) => {
    let error: unknown;
    try {
      parseResourceUri(uri);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('INVALID_ARGUMENT');
    expect((error as DomainError).message).toMatch(message);
  });
});
