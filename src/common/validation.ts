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
  // The input of each issue is kept, so a number out of its range can be quoted back.
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = fieldName(issue, root);
  throw new DomainError(ErrorCode.INVALID_ARGUMENT, `${field}: ${describe(issue, root)}`, {
    field,
  });
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

function describe(issue: z.core.$ZodIssue, root: string | undefined): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field (allowed fields are listed in the API documentation)`;
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message))
    return 'is required';
  if (issue.code === 'invalid_type' && issue.path.length === 0) {
    // The whole input is the wrong kind: named as what it is, the request body by default
    // (the field "body" would read as a document's body).
    const what = root === undefined ? 'the request body must be' : 'must be';
    return `${what} a JSON ${issue.expected}, got ${kindOf(issue.input)}`;
  }
  if (issue.code === 'too_big' || issue.code === 'too_small') return outOfRange(issue);
  return issue.message.replace(/^Invalid input: /, '');
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * A bound missed, in the words of the rest of the API (`must be at most 50, got 100000`)
 * rather than zod's (`Too big: expected number to be <=50`); a message a schema gave itself
 * stays.
 */
function outOfRange(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  if (!/^Too (big|small): /.test(issue.message)) return issue.message;
  const big = issue.code === 'too_big';
  const bound = Number(big ? issue.maximum : issue.minimum);
  const inclusive = issue.inclusive !== false;
  const input: unknown = issue.input;
  switch (issue.origin) {
    case 'number':
    case 'int': {
      const rule = big
        ? inclusive
          ? `must be at most ${bound}`
          : `must be below ${bound}`
        : inclusive
          ? `must be at least ${bound}`
          : `must be above ${bound}`;
      return typeof input === 'number' ? `${rule}, got ${input}` : rule;
    }
    case 'string': {
      if (!big && bound === 1 && !issue.exact) return 'must not be empty';
      const length = typeof input === 'string' ? `, got ${codePoints(input)}` : '';
      return `must be ${limit(issue, big)} ${counted(bound, 'character')}${length}`;
    }
    case 'array':
    case 'set': {
      if (!big && bound === 1 && !issue.exact) return 'must not be empty';
      const size = Array.isArray(input)
        ? input.length
        : input instanceof Set
          ? input.size
          : undefined;
      const count = size === undefined ? '' : `, got ${size}`;
      return `must have ${limit(issue, big)} ${counted(bound, 'item')}${count}`;
    }
    default:
      return issue.message;
  }
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

function limit(issue: { exact?: boolean }, big: boolean): string {
  if (issue.exact) return 'exactly';
  return big ? 'at most' : 'at least';
}

function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Characters as zod counts them (code points), without an array of a refused megabyte. */
function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}
