import { ErrorCode } from '../common/domain-error';
import {
  escapeLike,
  prefixUpperBound,
  MAX_ID_BYTES,
  parentOf,
  validateDocumentId,
  validateFolder,
  validatePrefix,
} from './document-id';
import { refusal } from '../../test/support/refusal';

describe('validateDocumentId', () => {
  it.each([
    'a',
    'knowledge/current-state/reports/phase-2.md',
    'with space/and-ünïcödé/文書.md',
    'dots.are/fine.../..hidden/.../x',
    '100%/a_b/~tilde',
    'x'.repeat(MAX_ID_BYTES),
    'é'.repeat(MAX_ID_BYTES / 2),
    '😀/emoji',
  ])('accepts %j unchanged', (id) => {
    expect(validateDocumentId(id)).toBe(id);
  });

  it.each([
    ['', /must not be empty/],
    ['/a', /must not start or end with "\/"/],
    ['a/', /must not start or end with "\/"/],
    ['/', /must not start or end with "\/"/],
    ['a//b', /empty segment/],
    ['.', /"\." segment/],
    ['..', /"\.\." segment/],
    ['a/./b', /"\." segment/],
    ['a/../b', /"\.\." segment/],
    ['../etc/passwd', /"\.\." segment/],
    ['a\\b', /control characters or a backslash/],
    ['a\u0000b', /control characters/],
    ['a\nb', /control characters/],
    ['a\tb', /control characters/],
    ['a\u007fb', /control characters/],
    ['a\u0085b', /control characters/],
    ['a\ud800b', /valid Unicode/],
    ['a\udc00', /valid Unicode/],
  ])('refuses %j naming the field', (id, problem) => {
    const error = refusal(() => validateDocumentId(id));
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.message).toMatch(/^document_id: /);
    expect(error.message).toMatch(problem);
    expect(error.details).toEqual({ field: 'document_id' });
  });

  it('counts the limit in UTF-8 bytes, not characters, and names it', () => {
    const error = refusal(() => validateDocumentId('é'.repeat(MAX_ID_BYTES / 2) + 'x'));
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.message).toBe(`document_id: is ${MAX_ID_BYTES + 1} bytes, the limit is 512`);
    expect(error.details).toEqual({ field: 'document_id', limit: 512 });
  });

  it('refuses values that are not strings', () => {
    for (const value of [undefined, null, 42, ['a'], { id: 'a' }]) {
      expect(refusal(() => validateDocumentId(value)).message).toBe(
        'document_id: must be a string',
      );
    }
  });

  it('names the field it was given', () => {
    expect(refusal(() => validateDocumentId('a//b', 'document_ids[3]')).details).toEqual({
      field: 'document_ids[3]',
    });
  });
});

describe('parentOf', () => {
  it('is the folder part of the id, null at the top level', () => {
    expect(parentOf('a/b/c.md')).toBe('a/b');
    expect(parentOf('a/b')).toBe('a');
    expect(parentOf('top.md')).toBeNull();
  });
});

describe('validatePrefix', () => {
  it('treats an absent prefix as the empty prefix', () => {
    expect(validatePrefix(undefined)).toBe('');
    expect(validatePrefix(null)).toBe('');
    expect(validatePrefix('')).toBe('');
  });

  it('accepts any text, wildcards and backslashes included', () => {
    for (const prefix of ['knowledge/', '/', '100%', 'a_b', 'back\\slash', 'a//']) {
      expect(validatePrefix(prefix)).toBe(prefix);
    }
  });

  it('refuses non-strings, control characters, lone surrogates and more than 512 bytes', () => {
    expect(refusal(() => validatePrefix(3)).message).toBe('prefix: must be a string');
    expect(refusal(() => validatePrefix('a\nb')).message).toMatch(/^prefix: .*control/);
    expect(refusal(() => validatePrefix('a\ud800')).message).toMatch(/^prefix: .*Unicode/);
    expect(refusal(() => validatePrefix('x'.repeat(513))).message).toMatch(/^prefix: .*512/);
    expect(validatePrefix('x'.repeat(512))).toHaveLength(512);
  });
});

describe('validateFolder', () => {
  it.each([
    [undefined, ''],
    ['', ''],
    ['team-a', 'team-a/'],
    ['team-a/', 'team-a/'],
    ['a/b c/50%_#?/Grüße', 'a/b c/50%_#?/Grüße/'],
  ])('%j → the prefix %j', (folder, prefix) => {
    expect(validateFolder(folder, 'folder')).toBe(prefix);
  });

  it.each([
    ['/', /must not be empty/],
    ['a//', /must not start or end with "\/"/],
    ['/a', /must not start or end with "\/"/],
    ['a//b', /empty segment/],
    ['a/../b', /"\.\." segment/],
    ['a\nb', /control/],
    [3, /must be a string/],
  ])('refuses %j, naming the field', (folder, problem) => {
    const error = refusal(() => validateFolder(folder, 'parent'));
    expect(error.details).toEqual({ field: 'parent' });
    expect(error.message).toMatch(/^parent: /);
    expect(error.message).toMatch(problem);
  });
});

describe('escapeLike', () => {
  it('escapes %, _ and the escape character itself', () => {
    expect(escapeLike('100%')).toBe('100\\%');
    expect(escapeLike('a_b')).toBe('a\\_b');
    expect(escapeLike('back\\slash')).toBe('back\\\\slash');
    expect(escapeLike('%_\\%')).toBe('\\%\\_\\\\\\%');
  });

  it('leaves everything else alone', () => {
    expect(escapeLike('knowledge/current-state/[x]*.md')).toBe('knowledge/current-state/[x]*.md');
  });
});

describe('prefixUpperBound', () => {
  const startsWithin = (id: string, prefix: string) => {
    const upper = prefixUpperBound(prefix)!;
    // Byte order of UTF-8, as PostgreSQL compares COLLATE "C" text.
    return (
      Buffer.compare(Buffer.from(id), Buffer.from(prefix)) >= 0 &&
      Buffer.compare(Buffer.from(id), Buffer.from(upper)) < 0
    );
  };

  it('increments the last code point', () => {
    expect(prefixUpperBound('knowledge/')).toBe('knowledge0');
    expect(prefixUpperBound('a')).toBe('b');
    expect(prefixUpperBound('\ud7ff')).toBe('\ue000');
    expect(prefixUpperBound('x\u{10ffff}')).toBe('y');
    expect(prefixUpperBound('\u{10ffff}')).toBeNull();
  });

  it.each([
    ['knowledge/', 'knowledge/a.md', true],
    ['knowledge/', 'knowledge0', false],
    ['knowledge/', 'knowledge', false],
    ['knowledge/', 'knowledge/\u{10ffff}/z', true],
    ['a%b', 'a%b/c', true],
    ['a%b', 'axb/c', false],
    ['é', 'é/ü', true],
    ['é', 'ê', false],
    ['日本/', '日本/語.md', true],
  ])('range of %j holds %j: %s', (prefix, id, inside) => {
    expect(startsWithin(id, prefix)).toBe(inside);
    expect(id.startsWith(prefix)).toBe(inside);
  });
});
