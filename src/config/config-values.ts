// Values shared by the configuration parsers: the profiles, the error, and the readers of
// numbers, booleans, choices, lists, URLs and other values.
import { isIP } from 'node:net';
import { validateCronExpression } from 'cron';
import type { VariableName } from './variables';
import { ConfigError } from './config-error';
import type { Reader } from './env-reader';
import { ModelError } from '../models/model-store';

// Declared in files of their own (which database-location.ts reads without this one); the
// parsers find them here beside the readers.
export { ConfigError, type Reader };

/** Profiles an API key or a scope may grant. `admin` grants the REST API; the others are MCP endpoints. */
export const PROFILES = ['internal', 'readonly', 'gpt', 'gpt-full', 'admin'] as const;
export type Profile = (typeof PROFILES)[number];

/** The one line a process prints when it cannot start; a configuration error says so. */
export function startupFailure(error: unknown): string {
  return error instanceof ConfigError
    ? `agent-data: invalid configuration: ${error.message}\n`
    : `agent-data: failed to start: ${error instanceof Error ? error.message : String(error)}\n`;
}

/**
 * Whether `error` is a refusal to start that startupFailure states whole in one line: a
 * setting, or a model (EMBEDDINGS_MODEL) that is not installed whole. Anything else is a fault,
 * whose stack is worth logging.
 */
export function isStartupRefusal(error: unknown): boolean {
  return error instanceof ConfigError || error instanceof ModelError;
}

/** `read(name)`, which must have a value: every reader below that returns one needs a default. */
function required(read: Reader, name: VariableName): string {
  const raw = read(name);
  if (raw === undefined) throw new Error(`${name} has no default in src/config/variables.ts`);
  return raw;
}

/** A text value (its default from the table when unset). */
export function text(read: Reader, name: VariableName): string {
  return required(read, name);
}

export function integer(read: Reader, name: VariableName, min: number, max: number): number {
  return number(name, required(read, name), /^-?\d+$/, 'an integer', min, max);
}

export function optionalInteger(
  read: Reader,
  name: VariableName,
  min: number,
  max: number,
): number | undefined {
  const raw = read(name);
  return raw === undefined ? undefined : number(name, raw, /^-?\d+$/, 'an integer', min, max);
}

/** A decimal number such as `0.3` within [min, max]; `undefined` when unset. */
export function optionalDecimal(
  read: Reader,
  name: VariableName,
  min: number,
  max: number,
): number | undefined {
  const raw = read(name);
  return raw === undefined ? undefined : number(name, raw, /^\d+(\.\d+)?$/, 'a number', min, max);
}

/** `raw` as a number if it matches `pattern` (described as `kind`) and lies within [min, max]. */
function number(
  name: VariableName,
  raw: string,
  pattern: RegExp,
  kind: string,
  min: number,
  max: number,
): number {
  if (!pattern.test(raw)) throw new ConfigError(name, `must be ${kind}, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** `raw` if it is an http(s) URL; `{ query: false }` also refuses a query and a fragment. */
export function httpUrl(
  name: VariableName,
  raw: string,
  options: { query?: boolean } = {},
): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http(s) URL, got protocol ${url.protocol}`);
  }
  if (options.query === false && (url.hash !== '' || url.search !== '')) {
    throw new ConfigError(name, 'must not have a fragment or a query');
  }
  return raw;
}

/** A comma-separated list, items trimmed, empty ones dropped. */
export function list(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function boolean(read: Reader, name: VariableName): boolean {
  const raw = required(read, name).toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(
  read: Reader,
  name: VariableName,
  allowed: readonly T[],
  fallback?: T,
): T {
  const raw = read(name);
  if (raw === undefined) {
    if (fallback === undefined) return required(read, name) as T;
    return fallback;
  }
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

export function optionalUrl(read: Reader, name: VariableName): string | undefined {
  const raw = read(name);
  return raw === undefined ? undefined : httpUrl(name, raw).replace(/\/+$/, '');
}

export function identifier(read: Reader, name: VariableName): string {
  const value = required(read, name);
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(value)) {
    throw new ConfigError(name, 'may contain only letters, digits, _ and -');
  }
  return value;
}

export function secretToken(read: Reader, name: VariableName): string | undefined {
  const value = read(name);
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9_-]{24,256}$/.test(value)) {
    throw new ConfigError(name, 'must be 24 to 256 characters of letters, digits, _ and -');
  }
  return value;
}

export function cron(read: Reader, name: VariableName): string {
  const value = required(read, name);
  const check = validateCronExpression(value);
  if (!check.valid) {
    throw new ConfigError(
      name,
      `is not a valid cron expression ("${value}"): ${check.error?.message ?? 'rejected'}`,
    );
  }
  return value;
}

/** `10.0.0.0/8,127.0.0.1,::1/128`: each entry an IP address with an optional prefix length. */
export function cidrs(read: Reader, name: VariableName): string[] {
  return list(read(name) ?? '').map((entry) => {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (
      family === 0 ||
      rest.length > 0 ||
      (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) ||
      bits > (family === 6 ? 128 : 32)
    ) {
      throw new ConfigError(
        name,
        `"${entry}" is not an IP address or CIDR range such as 10.0.0.0/8`,
      );
    }
    return `${address.toLowerCase()}/${bits}`;
  });
}
