import { returnPreference } from './prefer-header';

describe('returnPreference', () => {
  it.each([
    ['return=minimal', 'minimal'],
    ['Return = "Minimal"', 'minimal'],
    ['respond-async, wait=10, return=minimal; foo=bar', 'minimal'],
    ['return=representation', 'representation'],
    [['handling=lenient', 'return=minimal'], 'minimal'],
  ] as const)('reads %j as %s', (header, expected) => {
    expect(returnPreference(header)).toBe(expected);
  });

  it.each([undefined, '', 'handling=strict', 'return=nothing', 'return', 'returns=minimal'])(
    'has no preference in %j',
    (header) => {
      expect(returnPreference(header)).toBeUndefined();
    },
  );

  it('takes the first return preference', () => {
    expect(returnPreference('return=representation, return=minimal')).toBe('representation');
    expect(returnPreference('return=maybe, return=minimal')).toBeUndefined();
  });
});
