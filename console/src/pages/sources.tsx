import { useEffect, useState } from 'preact/hooks';
import { request, sourcePath, type Source, type SourceRun } from '../api';
import { formatTime, useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';
import {
  countsText,
  FailedItems,
  isActive,
  RUN_REFRESH_MS,
  runTime,
  statusText,
} from './source-run';

interface SourcesAnswer {
  sources: Source[];
  /** The SOURCES_FILE path, `null` when sources are declared through the API. */
  file: string | null;
  /** Why the sources file was last refused, `null` when its last reading applied. */
  file_error: string | null;
}

/**
 * The sources: where each comes from, its mount, state and documents, its last run and the
 * items it could not write, the next run; a sync asked for, and deletions held back by a run
 * confirmed. Refreshed while a run is under way, so that its end shows without a reload.
 */
export function SourcesPage() {
  const list = useLoad(() => request<SourcesAnswer>('/sources'), []);
  const [outcome, setOutcome] = useState<{ text: string; failed: boolean }>();
  const busy = list.data?.sources.some((source) => isActive(source.last_run)) ?? false;
  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(list.reload, RUN_REFRESH_MS);
    return () => clearInterval(timer);
  }, [busy]);

  async function sync(source: Source, confirmDeletions: boolean) {
    if (
      confirmDeletions &&
      !confirm(
        `Delete the ${deletions(source.held_deletions)} held back from ${source.id}? They can be restored from their history.`,
      )
    ) {
      return;
    }
    try {
      const run = await request<SourceRun>(
        sourcePath(source.id, `/sync${confirmDeletions ? '?confirm_deletions=true' : ''}`),
        { method: 'POST' },
      );
      setOutcome({
        // Said once and true afterwards: the card below shows the run as it goes.
        text: `${confirmDeletions ? 'Deletions confirmed: run' : 'Run'} ${run.id} of ${source.id} asked for; its card below follows it until it ends.`,
        failed: false,
      });
      list.reload();
    } catch (error) {
      setOutcome({ text: (error as Error).message, failed: true });
    }
  }

  const data = list.data;
  return (
    <section aria-labelledby="sources-title">
      <h1 id="sources-title">Sources</h1>
      {data && (
        <p class="hint">
          {data.file === null ? (
            'Declared through the API (POST /sources).'
          ) : (
            <>
              Declared in <code>{data.file}</code> (SOURCES_FILE): change them there.
            </>
          )}{' '}
          Each source keeps its mount in sync and its documents there are read-only to writers.
        </p>
      )}
      {data?.file_error && (
        <p class="error" role="alert">
          The sources file was refused, and the sources stay as they were: {data.file_error}
        </p>
      )}
      <div role={outcome?.failed ? 'alert' : 'status'} class={outcome?.failed ? 'error' : ''}>
        {outcome?.text}
      </div>
      {list.error ? (
        <Failure error={list.error} />
      ) : data === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : data.sources.length === 0 ? (
        <p>No source is declared.</p>
      ) : (
        data.sources.map((source) => <SourceCard key={source.id} source={source} onSync={sync} />)
      )}
    </section>
  );
}

function SourceCard({
  source,
  onSync,
}: {
  source: Source;
  onSync: (source: Source, confirmDeletions: boolean) => void;
}) {
  const run = source.last_run;
  const titleId = `source-${source.id}`;
  const from = source.declaration.url ?? source.declaration.path;
  return (
    <section class="card source" aria-labelledby={titleId}>
      <h2 id={titleId}>{source.id}</h2>
      <dl class="meta">
        <dt>Kind</dt>
        <dd>{source.kind}</dd>
        {from !== undefined && (
          <>
            <dt>From</dt>
            <dd>
              <code>{from}</code>
              {source.declaration.ref !== undefined && <> at {source.declaration.ref}</>}
            </dd>
          </>
        )}
        <dt>Mount</dt>
        <dd>
          <a href={href('browse', source.mount)}>{source.mount}/</a>
        </dd>
        <dt>State</dt>
        <dd>{stateText(source)}</dd>
        <dt>Documents</dt>
        <dd>{source.documents ?? 'not all readable'}</dd>
        <dt>Last run</dt>
        <dd>
          {run === null ? (
            'none yet'
          ) : (
            <>
              {statusText(run)}, {formatTime(runTime(run))}
              {!isActive(run) && <>: {countsText(run.counts)}</>}
              {run.message && <div class="run-message">{run.message}</div>}
            </>
          )}
        </dd>
        <dt>Last success</dt>
        <dd>{source.last_success_at === null ? 'none yet' : formatTime(source.last_success_at)}</dd>
        <dt>Next run</dt>
        <dd>
          {source.state === 'paused'
            ? 'none: paused after failing; Sync now tries again'
            : source.next_run_at === null
              ? 'not scheduled'
              : formatTime(source.next_run_at)}
        </dd>
      </dl>
      {source.held_deletions > 0 && (
        <div class="held">
          <p>
            <strong>{deletions(source.held_deletions)} held back.</strong> A run found them gone
            from the source, more than it may delete without asking; their documents stay until the
            deletions are confirmed.
          </p>
          <button type="button" class="danger-button" onClick={() => onSync(source, true)}>
            Confirm deletions
          </button>
        </div>
      )}
      {run !== null && <FailedItems run={run} caption="Items the last run could not write" />}
      <div class="actions">
        <button type="button" onClick={() => onSync(source, false)}>
          Sync now
        </button>
        <a href={href('sources', source.id)}>Runs of {source.id}</a>
      </div>
    </section>
  );
}

function stateText(source: Source): string {
  switch (source.state) {
    case 'idle':
      return 'idle';
    case 'queued':
      return 'queued: a run waits to start';
    case 'running':
      return 'running';
    case 'paused':
      return `paused after ${source.failures} failed runs in a row`;
    case 'failing':
      return `failing: ${source.failures} failed run${source.failures === 1 ? '' : 's'} in a row, tried again on schedule`;
  }
}

function deletions(count: number): string {
  return `${count} deletion${count === 1 ? '' : 's'}`;
}
