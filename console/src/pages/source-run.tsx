import type { RunCounts, SourceRun } from '../api';

/** How often a page showing a queued or running run asks again. */
export const RUN_REFRESH_MS = 1_000;

/** A run still to end: the pages showing it refresh until it has. */
export function isActive(run: SourceRun | null | undefined): boolean {
  return run?.status === 'queued' || run?.status === 'running';
}

const STATUS_WORDS: Record<SourceRun['status'], string> = {
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  completed_with_errors: 'completed with errors',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function statusText(run: SourceRun): string {
  return STATUS_WORDS[run.status] ?? run.status;
}

/** When the run last moved: its end, else its start, else when it was asked for. */
export function runTime(run: SourceRun): string {
  return run.finished_at ?? run.started_at ?? run.queued_at;
}

/**
 * The counts that say something (`4 created, 1 skipped`), in the order a reader asks about
 * them; "checked" alone when nothing else happened.
 */
export function countsText(counts: RunCounts): string {
  const order: Array<keyof RunCounts> = [
    'created',
    'updated',
    'moved',
    'deleted',
    'held',
    'failed',
    'skipped',
    'unchanged',
  ];
  const parts = order.filter((name) => counts[name] > 0).map((name) => `${counts[name]} ${name}`);
  const checked = `${counts.checked} checked`;
  return parts.length === 0 ? `${checked}, nothing changed` : `${checked}: ${parts.join(', ')}`;
}

/**
 * The items a run could not write, each with its reason and the document it would be (not a
 * link: a new item that failed has no document yet).
 */
export function FailedItems({ run, caption }: { run: SourceRun; caption: string }) {
  if (run.failed_items.length === 0) return null;
  return (
    <table class="failed-items">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Item</th>
          <th scope="col">Document</th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {run.failed_items.map((item) => (
          <tr key={item.key}>
            <td>
              <code>{item.key}</code>
            </td>
            <td>
              <code>{item.document_id}</code>
            </td>
            <td>{item.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
