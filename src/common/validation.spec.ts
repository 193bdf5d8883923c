import { z } from 'zod';
import { ErrorCode } from './domain-error';
import { parseInput, queryInteger, queryParameters } from './validation';
import { refusal } from '../../test/support/refusal';

const schema = z.strictObject({
  document_id: z.string(),
  tags: z.array(z.string()).optional(),
  metadata: z.strictObject({ source: z.string() }).optional(),
});

describe('parseInput', () => {
  it('returns the parsed value', () => {
    expect(parseInput(schema, { document_id: 'a', tags: ['x'] })).toEqual({
      document_id: 'a',
      tags: ['x'],
    });
  });

  it.each([
    [{}, 'document_id', 'document_id: is required'],
    [{ document_id: 5 }, 'document_id', 'document_id: expected string, received number'],
    [{ document_id: 'a', tags: ['x', 3] }, 'tags[1]', 'tags[1]: expected string, received number'],
    [{ document_id: 'a', colour: 'red' }, 'colour', /^colour: unknown field/],
    [{ document_id: 'a', metadata: { source: 1 } }, 'metadata.source', /^metadata\.source: /],
    [{ document_id: 'a', metadata: { source: 'x', y: 1 } }, 'metadata.y', /^metadata\.y: unknown/],
    [undefined, 'body', 'body: is required'],
    [[], 'body', 'body: the request body must be a JSON object, got an array'],
    [null, 'body', 'body: the request body must be a JSON object, got null'],
  ])('refuses %j with INVALID_ARGUMENT naming %s', (value, field, message) => {
    const error = refusal(() => parseInput(schema, value));
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.details).toEqual({ field });
    expect(error.message).toMatch(message);
  });

  it.each([
    [{ limit: 100000 }, 'limit: must be at most 50, got 100000'],
    [{ limit: 0 }, 'limit: must be at least 1, got 0'],
    [{ ratio: 1 }, 'ratio: must be below 1, got 1'],
    [{ query: '' }, 'query: must not be empty'],
    [{ query: 'abcdéf' }, 'query: must be at most 5 characters, got 6'],
    [{ tags: ['a', 'b', 'c'] }, 'tags: must have at most 2 items, got 3'],
    [{ tags: [] }, 'tags: must not be empty'],
    [{ named: 'x' }, 'named: give at least two'],
    [{ code: 'abc🚀d' }, 'code: must be exactly 4 characters, got 5'],
    [{ one: 'ab' }, 'one: must be at most 1 character, got 2'],
    [{ pair: ['a'] }, 'pair: must have exactly 2 items, got 1'],
    [{ unique: new Set(['a', 'b']) }, 'unique: must have at most 1 item, got 2'],
  ])('names a bound %j missed in the words of the API', (value, message) => {
    const bounded = z.object({
      limit: z.number().int().min(1).max(50).optional(),
      ratio: z.number().lt(1).optional(),
      query: z.string().min(1).max(5).optional(),
      tags: z.array(z.string()).min(1).max(2).optional(),
      named: z.string().min(2, 'give at least two').optional(),
      code: z.string().length(4).optional(),
      one: z.string().max(1).optional(),
      pair: z.array(z.string()).length(2).optional(),
      unique: z.set(z.string()).max(1).optional(),
    });
    expect(refusal(() => parseInput(bounded, value)).message).toBe(message);
  });

  it('names the wrong kind of a whole input under its root', () => {
    expect(refusal(() => parseInput(schema, [], 'arguments')).message).toBe(
      'arguments: must be a JSON object, got an array',
    );
  });

  it('prefixes the field with a root when given', () => {
    expect(refusal(() => parseInput(schema, {}, 'arguments')).details).toEqual({
      field: 'arguments.document_id',
    });
  });
});

describe('queryInteger', () => {
  it('reads decimal integers and leaves an absent value undefined', () => {
    expect(queryInteger(undefined, 'limit')).toBeUndefined();
    expect(queryInteger('0', 'offset')).toBe(0);
    expect(queryInteger('050', 'limit')).toBe(50);
    expect(queryInteger('-1', 'offset')).toBe(-1);
  });

  it.each(['', 'ten', '1.5', '1e3', ' 1', '0x10', '12345678901', ['1', '2']])(
    'refuses %j naming the field',
    (value) => {
      const error = refusal(() => queryInteger(value, 'limit'));
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toMatch(/^limit: must be an integer/);
      expect(error.details).toEqual({ field: 'limit' });
    },
  );
});

describe('queryParameters', () => {
  it('gives the named parameters, absent ones left out', () => {
    expect(queryParameters({ folder: 'a', limit: '3' }, ['folder', 'limit', 'cursor'])).toEqual({
      folder: 'a',
      limit: '3',
    });
  });

  it.each([
    [{ folder: 'a', colour: 'red' }, 'colour', 'colour: unknown query parameter'],
    [{ folder: ['a', 'b'] }, 'folder', 'folder: must be given once'],
  ])('refuses %j naming %s', (query, field, message) => {
    const error = refusal(() => queryParameters(query, ['folder']));
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.details).toEqual({ field });
    expect(error.message).toBe(message);
  });
});
