import { defaultOf, type VariableName } from './variables';

/** The environment, as `process.env` or a test gives it. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads one environment variable of the table (variables.ts), trimmed: its default from the
 * table when unset or blank, `undefined` when it has none.
 */
export type Reader = (name: VariableName) => string | undefined;

/** Reads the variables of the table from `env`: trimmed, blank as unset. */
export function readersOf(env: Env): { given: Reader; read: Reader } {
  /** The variable as set, `undefined` when unset or blank. */
  const given: Reader = (name) => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  /** The variable as set, else its default from the table (variables.ts). */
  const read: Reader = (name) => given(name) ?? defaultOf(name);
  return { given, read };
}
