import { useEffect } from 'preact/hooks';
import { request, sourcePath, type SourceRun } from '../api';
import { formatTime, useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';
import { countsText, FailedItems, isActive, RUN_REFRESH_MS, statusText } from './source-run';

const PAGE_SIZE = 20;

/** A source's runs, newest first, a page at a time; followed while one is under way. */
export function SourceRunsPage({ id, before }: { id: string; before?: string }) {
  const runs = useLoad(
    () =>
      request<{ runs: SourceRun[] }>(
        sourcePath(
          id,
          `/runs?limit=${PAGE_SIZE}${before ? `&before=${encodeURIComponent(before)}` : ''}`,
        ),
      ),
    [id, before],
  );
  const busy = runs.data?.runs.some(isActive) ?? false;
  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(runs.reload, RUN_REFRESH_MS);
    return () => clearInterval(timer);
  }, [busy]);
  const shown = runs.data?.runs;

  return (
    <section aria-labelledby="runs-title">
      <nav aria-label="Sources path" class="crumbs">
        <a href={href('sources')}>Sources</a> / {id}
      </nav>
      <h1 id="runs-title">Runs of {id}</h1>
      {runs.error ? (
        <Failure error={runs.error} />
      ) : shown === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : shown.length === 0 ? (
        <p>No run{before ? ' older than these' : ' yet'}.</p>
      ) : (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Asked for</th>
                <th scope="col">By</th>
                <th scope="col">Status</th>
                <th scope="col">Took</th>
                <th scope="col">What it did</th>
                <th scope="col">Version</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((run) => (
                <tr key={run.id}>
                  <td>{formatTime(run.queued_at)}</td>
                  <td>
                    {run.trigger}
                    {run.confirm_deletions && ', deletions confirmed'}
                  </td>
                  <td>{statusText(run)}</td>
                  <td>{took(run)}</td>
                  <td>
                    {isActive(run) ? '' : countsText(run.counts)}
                    {run.message && <div class="run-message">{run.message}</div>}
                    <FailedItems run={run} caption="Items this run could not write" />
                  </td>
                  <td>
                    {run.version && <code title={run.version}>{run.version.slice(0, 12)}</code>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav aria-label="Pages" class="pager">
            {before && <a href={href('sources', id)}>Newest runs</a>}
            {shown.length === PAGE_SIZE && (
              <a href={href('sources', id, { before: shown[shown.length - 1].id })}>Older runs</a>
            )}
          </nav>
        </>
      )}
    </section>
  );
}

function took(run: SourceRun): string {
  if (run.started_at === null || run.finished_at === null) return '';
  const seconds = (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds / 60)} min`;
}
