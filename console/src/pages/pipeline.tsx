import { useEffect, useState } from 'preact/hooks';
import { request } from '../api';
import { formatTime, useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';

interface Status {
  sync_enabled: boolean;
  counts: Record<string, number>;
  leased: number;
  lag_seconds: number;
  counts_age_seconds: number;
  errors: Array<{ document_id: string; error: string | null; attempts: number }>;
  embedder: Record<string, unknown>;
  store: Record<string, unknown>;
  lexical: Record<string, unknown>;
  listener: Record<string, unknown>;
  worker: Record<string, unknown>;
}

const REFRESH_MS = 5_000;

/** The vector pipeline: counts, lag, errors, re-queue, the embedder and store; refreshed live. */
export function PipelinePage() {
  const status = useLoad(() => request<Status>('/admin/vectors/status'), []);
  const [prefix, setPrefix] = useState('');
  const [message, setMessage] = useState('');
  useEffect(() => {
    const timer = setInterval(status.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  async function requeue(target: string | undefined) {
    try {
      const result = await request<{ queued: number }>('/admin/vectors/reindex', {
        method: 'POST',
        body: target === undefined ? {} : { prefix: target },
      });
      setMessage(
        `Queued ${result.queued} document${result.queued === 1 ? '' : 's'} for embedding.`,
      );
      status.reload();
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  return (
    <section aria-labelledby="pipeline-title">
      <h1 id="pipeline-title">Pipeline</h1>
      <p class="hint">Refreshed every {REFRESH_MS / 1000} seconds while this page is open.</p>
      {message && <p role="status">{message}</p>}
      {status.error && <Failure error={status.error} />}
      {status.data && <StatusView status={status.data} onRequeue={requeue} />}
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void requeue(prefix.trim() || undefined);
        }}
      >
        <label for="requeue-prefix">Re-queue a folder (empty: everything)</label>
        <input
          id="requeue-prefix"
          value={prefix}
          onInput={(e) => setPrefix((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Re-queue</button>
      </form>
    </section>
  );
}

function StatusView({ status, onRequeue }: { status: Status; onRequeue: (id: string) => void }) {
  const queue = status;
  return (
    <>
      <h2>Documents by vector status</h2>
      {queue.counts_age_seconds > 0 && (
        // On a large knowledge base the counts read every document: the server reuses them.
        <p class="hint">Counted {queue.counts_age_seconds} s ago.</p>
      )}
      <dl class="counts">
        {Object.entries(queue.counts).map(([name, count]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{count}</dd>
          </div>
        ))}
        <div>
          <dt>being embedded</dt>
          <dd>{queue.leased}</dd>
        </div>
        <div>
          <dt>lag</dt>
          <dd>{queue.lag_seconds.toFixed(1)} s</dd>
        </div>
      </dl>
      <p>Background sync is {status.sync_enabled ? 'on' : 'off'}.</p>
      <h2>Documents in error</h2>
      {queue.errors.length === 0 ? (
        <p>None.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Error</th>
              <th scope="col">Attempts</th>
              <th scope="col">Re-queue</th>
            </tr>
          </thead>
          <tbody>
            {queue.errors.map((entry) => (
              <tr key={entry.document_id}>
                <td>
                  <a href={href('doc', entry.document_id)}>{entry.document_id}</a>
                </td>
                <td>{entry.error}</td>
                <td>{entry.attempts}</td>
                <td>
                  <button type="button" onClick={() => onRequeue(entry.document_id)}>
                    Re-queue {entry.document_id}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Embedder and stores</h2>
      <div class="health">
        <Health title="Embedder" value={status.embedder} />
        <Health title="Vector store" value={status.store} />
        <Health title="Lexical index" value={status.lexical} />
        <Health title="Change listener" value={status.listener} />
        <Health title="Worker" value={status.worker} />
      </div>
    </>
  );
}

function Health({ title, value }: { title: string; value: Record<string, unknown> }) {
  return (
    <section class="card" aria-label={title}>
      <h3>{title}</h3>
      <dl>
        {Object.entries(value).map(([name, detail]) => (
          <div key={name}>
            <dt>{name.replace(/_/g, ' ')}</dt>
            <dd>{describe(name, detail)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/**
 * A status value in words: yes/no, "none", local times, an object's fields as "name: value"
 * (a Qdrant collection's name, layout, points, shards, replication and write consistency).
 */
function describe(name: string, value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && /(_at|_since)$/.test(name)) return formatTime(value);
  if (Array.isArray(value)) return JSON.stringify(value);
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([field, detail]) => `${field.replace(/_/g, ' ')}: ${describe(field, detail)}`)
      .join('; ');
  }
  return String(value);
}
