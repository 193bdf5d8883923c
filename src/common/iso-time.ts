/** `2026-11-27T10:00`, seconds and their fraction optional, then `Z` or an offset. */
const INSTANT =
  /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,6}))?)?(Z|[+-]\d\d:\d\d)$/;

/**
 * An ISO 8601 time with its offset (the RFC 3339 profile: `2026-11-27T10:00:00Z`,
 * `2026-11-27T11:00+01:00`, `2026-11-27T10:00:00.123456Z`), as microseconds since
 * 1970-01-01 UTC, the precision PostgreSQL keeps; `undefined` for anything else: no offset
 * (a local time means different instants to different servers), more than six decimals, a
 * day or an hour that does not exist (`2026-02-30`, `24:00`), the year 0.
 */
export function parseInstant(text: string): bigint | undefined {
  const match = INSTANT.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '0', fraction = '', offset] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number);
  if (y === 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return undefined;
  if (h > 23 || mi > 59 || s > 59) return undefined;
  let offsetMinutes = 0;
  if (offset !== 'Z') {
    const [oh, om] = [Number(offset.slice(1, 3)), Number(offset.slice(4))];
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (offset[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Date.UTC would read the years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi - offsetMinutes, s);
  return BigInt(date.getTime()) * 1000n + BigInt(fraction.padEnd(6, '0'));
}

/** Microseconds since 1970 UTC as ISO 8601 text with all six decimals (for PostgreSQL). */
export function instantText(microseconds: bigint): string {
  const milliseconds = floorDiv(microseconds, 1000n);
  const rest = microseconds - milliseconds * 1000n;
  return new Date(Number(milliseconds))
    .toISOString()
    .replace('Z', `${String(rest).padStart(3, '0')}Z`);
}

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

function floorDiv(a: bigint, b: bigint): bigint {
  const quotient = a / b;
  return quotient * b > a ? quotient - 1n : quotient;
}
