import { z } from 'zod';
import { DomainError, ErrorCode, invalidArgument } from './domain-error';

/**
 * Parses `value` with `schema`, or throws INVALID_ARGUMENT naming the first bad field
 * (`tags[2]: expected string, received number`).
 */
export function parseInput<T extends z.ZodType>(
  schema: T,
  value: unknown,
  root?: string,
): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = fieldName(issue, root);
  throw new DomainError(ErrorCode.INVALID_ARGUMENT, `${field}: ${describe(issue)}`, { field });
}

function fieldName(issue: z.core.$ZodIssue, root: string | undefined): string {
  const path = [...(root ? [root] : []), ...issue.path.map(String)];
  if (issue.code === 'unrecognized_keys') path.push(issue.keys[0]);
  const text = path.reduce<string>(
    (acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part),
    '',
  );
  return text || 'body';
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field (allowed fields are listed in the API documentation)`;
  // zod 4 leaves `issue.input` out unless asked, so a missing value is told by its message.
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message))
    return 'is required';
  return issue.message.replace(/^Invalid input: /, '');
}

/** Strict decimal integer from a query-string value; `undefined` stays `undefined`. */
export function queryInteger(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d{1,10}$/.test(value)) {
    throw new DomainError(
      ErrorCode.INVALID_ARGUMENT,
      `${field}: must be an integer, got ${JSON.stringify(value)}`,
      {
        field,
      },
    );
  }
  return Number(value);
}

/**
 * The query-string parameters among `names`, each given at most once; INVALID_ARGUMENT names
 * the first one that is unknown or repeated.
 */
export function queryParameters<K extends string>(
  query: Record<string, unknown>,
  names: readonly K[],
): Partial<Record<K, string>> {
  for (const [name, value] of Object.entries(query)) {
    if (!(names as readonly string[]).includes(name)) {
      throw invalidArgument(name, 'unknown query parameter');
    }
    if (typeof value !== 'string') throw invalidArgument(name, 'must be given once');
  }
  return query as Partial<Record<K, string>>;
}
