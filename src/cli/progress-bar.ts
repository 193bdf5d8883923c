import { SingleBar } from 'cli-progress';

export interface ProgressBar {
  /** `done` of `total` items (or bytes), and what is under way; the first call shows the bar. */
  update(done: number, total: number, detail?: string): void;
  stop(): void;
}

/**
 * A progress bar on stderr when it is a terminal: never in JSON mode, never into a pipe (a
 * script reading the output sees only the results). `bytes` shows MB rather than counts,
 * after `label`.
 */
export function progressBar(
  json: boolean,
  options: { label?: string; bytes?: boolean } = {},
): ProgressBar | undefined {
  if (json || !process.stderr.isTTY) return undefined;
  const label = options.label === undefined ? '' : `${options.label} `;
  const bar = new SingleBar({
    stream: process.stderr,
    format: `${label}{bar} {value}/{total}${options.bytes ? ' MB' : ''} {percentage}% {detail}`,
    formatValue: (value, _options, type) =>
      options.bytes && (type === 'value' || type === 'total')
        ? (value / 1e6).toFixed(1)
        : String(value),
    hideCursor: true,
  });
  let started = false;
  return {
    update: (done, total, detail = '') => {
      if (!started) {
        bar.start(total, done, { detail });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done, { detail });
      }
    },
    stop: () => started && bar.stop(),
  };
}
