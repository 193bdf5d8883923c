import { ErrorCode } from '../common/domain-error';
import { canonicalJson } from '../common/canonical-json';
import { fingerprintOf, keyOwnerOf, parseIdempotencyKey } from './idempotency-key';

describe('parseIdempotencyKey', () => {
  it.each([
    ['a UUID', '8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ["the draft's quoted form", '"8e03978e"', '8e03978e'],
    ['one character', 'x', 'x'],
    ['255 characters', 'k'.repeat(255), 'k'.repeat(255)],
    ['spaces and punctuation', 'import run #3: batch {7}', 'import run #3: batch {7}'],
  ])('accepts %s', (_, value, key) => {
    expect(parseIdempotencyKey(value)).toBe(key);
  });

  it('answers undefined when no key was sent', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it.each([
    ['an empty value', ''],
    ['empty quotes', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['a tab', 'a\tb'],
    ['a non-ASCII letter', 'clé'],
    ['a number', 42],
    ['a list', ['a', 'b']],
  ])('refuses %s, naming the rule and the field', (_, value) => {
    expect(() => parseIdempotencyKey(value, 'the-field')).toThrow(
      expect.objectContaining({
        code: ErrorCode.INVALID_ARGUMENT,
        details: { field: 'the-field' },
        message: expect.stringMatching(/^the-field: must be .*1 to 255 printable ASCII/),
      }),
    );
  });
});

describe('canonicalJson and fingerprintOf', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,1]},"b":1}',
    );
    expect(fingerprintOf([{ x: 1, y: 2 }])).toBe(fingerprintOf([{ y: 2, x: 1 }]));
  });

  it('tells apart what a retry must repeat', () => {
    const base = fingerprintOf(['PUT', '/documents/a.md', { body: 'x' }, '"1"']);
    expect(fingerprintOf(['PUT', '/documents/a.md', { body: 'x' }, '"2"'])).not.toBe(base);
    expect(fingerprintOf(['PUT', '/documents/b.md', { body: 'x' }, '"1"'])).not.toBe(base);
    expect(fingerprintOf(['PUT', '/documents/a.md', { body: 'y' }, '"1"'])).not.toBe(base);
    expect(fingerprintOf(['PUT', '/documents/a.md', { body: 'x' }, '"1"'])).toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves undefined fields out, as JSON would', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('keyOwnerOf', () => {
  it('keeps apart an API key and an access token of the same name', () => {
    const key = keyOwnerOf({ name: 'ops', via: 'key', profiles: null });
    const token = keyOwnerOf({ name: 'ops', via: 'token', profiles: null, subject: 'ops' });
    expect(key).toBe('key ops');
    expect(token).not.toBe(key);
  });
});
