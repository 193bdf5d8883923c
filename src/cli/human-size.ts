/**
 * A size as a person reads it: bytes below a kilobyte, then kB, MB, GB (powers of 1000, as
 * `ls --si` and the model downloads print them), with one decimal. No dependency of the
 * project formats sizes, and this is smaller than adding one.
 */
export function humanSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  // 999.96 kB would print as "1000.0 kB": it is 1.0 MB.
  while (value >= 999.95 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
