import { humanSize } from './human-size';

describe('humanSize', () => {
  it.each([
    [0, '0 B'],
    [512, '512 B'],
    [999, '999 B'],
    [1000, '1.0 kB'],
    [23_456, '23.5 kB'],
    [999_949, '999.9 kB'],
    [999_960, '1.0 MB'],
    [4_000_000, '4.0 MB'],
    [2_500_000_000, '2.5 GB'],
    [3e15, '3000.0 TB'],
  ])('%d bytes read as %s', (bytes, shown) => {
    expect(humanSize(bytes)).toBe(shown);
  });
});
