import { z } from 'zod';
import { portableJsonSchema } from './portable-json-schema';

function portable(schema: z.ZodObject): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'output' });
  return portableJsonSchema(rest);
}

describe('portable tool schemas', () => {
  it('spells nullable fields as anyOf, never as a type array', () => {
    expect(portable(z.object({ parent: z.string().nullable() })).properties).toEqual({
      parent: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    });
    expect(
      portable(z.object({ n: z.union([z.string(), z.number()]).describe('x') })).properties,
    ).toEqual({
      n: { description: 'x', anyOf: [{ type: 'string' }, { type: 'number' }] },
    });
  });

  it('keeps other keywords beside the anyOf, and nests when one is already there', () => {
    expect(portableJsonSchema({ type: ['number', 'null'], default: null })).toEqual({
      default: null,
      anyOf: [{ type: 'number' }, { type: 'null' }],
    });
    expect(
      portableJsonSchema({ type: ['string', 'null'], anyOf: [{ minLength: 1 }, { type: 'null' }] }),
    ).toEqual({
      anyOf: [{ minLength: 1 }, { type: 'null' }],
      allOf: [{ anyOf: [{ type: 'string' }, { type: 'null' }] }],
    });
  });

  it('declares free-form objects with additionalProperties: true', () => {
    expect(portable(z.object({ metadata: z.record(z.string(), z.unknown()) })).properties).toEqual({
      metadata: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: true },
    });
  });

  it('spells an unconstrained value as the six JSON types', () => {
    expect(portable(z.object({ anything: z.unknown() })).properties).toEqual({
      anything: {
        anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })),
      },
    });
  });

  it('replaces bare boolean schemas where clients expect objects', () => {
    const tuple = portable(z.object({ pair: z.tuple([z.string(), z.number()]) }))
      .properties as Record<string, Record<string, unknown>>;
    expect(tuple.pair.items).toEqual({ not: {} });
    expect(portableJsonSchema({ type: 'object', additionalProperties: false })).toEqual({
      type: 'object',
      additionalProperties: false,
    });
  });

  it('drops the ±(2^53 − 1) bounds zod puts on every integer, keeping real ones', () => {
    expect(
      portable(z.object({ n: z.number().int(), m: z.number().int().min(1).max(50) })).properties,
    ).toEqual({
      n: { type: 'integer' },
      m: { type: 'integer', minimum: 1, maximum: 50 },
    });
  });

  it('leaves a portable schema as it is', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', minLength: 1 } },
      required: ['a'],
    };
    expect(portableJsonSchema(schema)).toEqual(schema);
  });
});
