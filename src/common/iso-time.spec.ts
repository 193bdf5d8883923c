import { instantText, parseInstant } from './iso-time';

const at = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

describe('parseInstant', () => {
  it.each([
    ['2026-11-27T10:00:00Z', at('2026-11-27T10:00:00Z')],
    ['2026-11-27T10:00Z', at('2026-11-27T10:00:00Z')],
    ['2026-11-27T11:30:00+01:30', at('2026-11-27T10:00:00Z')],
    ['2026-11-27T08:00:00-02:00', at('2026-11-27T10:00:00Z')],
    ['2026-11-27T10:00:00.5Z', at('2026-11-27T10:00:00Z') + 500_000n],
    ['2026-11-27T10:00:00.123456Z', at('2026-11-27T10:00:00Z') + 123_456n],
    ['2024-02-29T00:00:00Z', at('2024-02-29T00:00:00Z')],
    ['2000-02-29T00:00:00Z', at('2000-02-29T00:00:00Z')],
    ['1969-12-31T23:59:59.999999Z', -1n],
    ['0050-01-01T00:00:00Z', -60589296000000000n],
  ])('%s → %p µs', (text, expected) => {
    expect(parseInstant(text)).toBe(expected);
  });

  it.each([
    ['no offset', '2026-11-27T10:00:00'],
    ['a date alone', '2026-11-27'],
    ['a space for T', '2026-11-27 10:00:00Z'],
    ['seven decimals', '2026-11-27T10:00:00.1234567Z'],
    ['February 30', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2100-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24', '2026-11-27T24:00:00Z'],
    ['second 60', '2026-11-27T10:00:60Z'],
    ['offset hour 24', '2026-11-27T10:00:00+24:00'],
    ['offset without colon', '2026-11-27T10:00:00+0100'],
    ['the year 0', '0000-01-01T00:00:00Z'],
    ['epoch milliseconds', '1764237600000'],
    ['trailing text', '2026-11-27T10:00:00Zx'],
  ])('refuses %s (%s)', (_name, text) => {
    expect(parseInstant(text)).toBeUndefined();
  });
});

describe('instantText', () => {
  it.each([
    ['2026-11-27T10:00:00.123456Z'],
    ['1969-12-31T23:59:59.999999Z'],
    ['0050-01-01T00:00:00.000001Z'],
  ])('%s round-trips with six decimals', (text) => {
    expect(instantText(parseInstant(text)!)).toBe(text);
  });
});
