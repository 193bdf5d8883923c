// Values shared by the configuration parsers: the profiles, the error, and readers of numbers, lists and URLs.
/** Profiles an API key or a scope may grant. `admin` grants the REST API; the others are MCP endpoints. */
export const PROFILES = ['internal', 'readonly', 'gpt', 'gpt-full', 'admin'] as const;
export type Profile = (typeof PROFILES)[number];

/** A bad configuration value: the message names the variable and what is wrong. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** Reads one environment variable, trimmed; `undefined` when unset or blank. */
export type Reader = (name: string) => string | undefined;

export function integer(
  read: Reader,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  return optionalInteger(read, name, min, max) ?? fallback;
}

export function optionalInteger(
  read: Reader,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const raw = read(name);
  return raw === undefined ? undefined : number(name, raw, /^-?\d+$/, 'an integer', min, max);
}

/** A decimal number such as `0.3` within [min, max], or `fallback` when unset. */
export function decimal(
  read: Reader,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = read(name);
  return raw === undefined ? fallback : number(name, raw, /^\d+(\.\d+)?$/, 'a number', min, max);
}

/** `raw` as a number if it matches `pattern` (described as `kind`) and lies within [min, max]. */
function number(
  name: string,
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
export function httpUrl(name: string, raw: string, options: { query?: boolean } = {}): string {
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
