import type { z } from 'zod';

/**
 * A value as it may arrive from the driver for a shape `T`: each text field may be a `Date`
 * (PostgreSQL's times), which the answer shows as ISO 8601 text.
 */
export type Unconverted<T> = {
  [K in keyof T]: T[K] | (string extends T[K] ? Date : never);
};

/**
 * The function that answers a shape from a value holding its fields (a database row, a
 * document): the fields `schema` names, in the schema's order (the order of the JSON
 * answer), each `Date` as ISO 8601 text, and nothing else (a row's internal columns stay
 * behind). The keys are read from the schema once, here, so the shape is written in one
 * place only. Nothing is validated: the value's type already guarantees the fields.
 */
export function fieldsOf<S extends z.ZodObject>(
  schema: S,
): (source: Unconverted<z.output<S>>) => z.output<S> {
  const keys = Object.keys(schema.shape);
  return (source) => {
    const fields: Record<string, unknown> = {};
    for (const key of keys) {
      const value = (source as Record<string, unknown>)[key];
      fields[key] = value instanceof Date ? value.toISOString() : value;
    }
    return fields as z.output<S>;
  };
}
