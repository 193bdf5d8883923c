import { useState } from 'preact/hooks';
import { documentPath, request, type Document, type HistoryEntry } from '../api';
import { formatTime, useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';
import { LineDiff } from './line-diff';

interface History {
  document_id: string;
  current_revision: number;
  deleted: boolean;
  items: HistoryEntry[];
  next_offset: number | null;
}

interface Revision {
  revision: number;
  body: string;
}

/** A document's revisions with who made each, a diff between any two, restore any. */
export function HistoryPage({ id }: { id: string }) {
  const [offset, setOffset] = useState(0);
  const history = useLoad(
    () => request<History>(documentPath(id, `/history?limit=50&offset=${offset}`)),
    [id, offset],
  );
  const current = useLoad(() => request<Document>(documentPath(id)).catch(() => undefined), [id]);
  const [from, setFrom] = useState<number | undefined>();
  const [to, setTo] = useState<number | undefined>();
  const [message, setMessage] = useState('');

  const body = (revision: number | undefined) =>
    revision === undefined
      ? Promise.resolve(undefined)
      : current.data && revision === current.data.revision
        ? Promise.resolve(current.data.body)
        : request<Revision>(documentPath(id, `/history?revision=${revision}`)).then((r) => r.body);
  const diff = useLoad(
    () => Promise.all([body(from), body(to)]),
    [id, from, to, current.data?.revision],
  );

  async function restore(revision: number | undefined) {
    try {
      const restored = await request<Document>(documentPath(id, '/restore'), {
        method: 'POST',
        body: revision === undefined ? {} : { revision },
      });
      setMessage(`Restored: the document is now at revision ${restored.revision}.`);
      history.reload();
      current.reload();
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  if (history.error) return <Failure error={history.error} />;
  const data = history.data;
  if (data === undefined) return <p aria-busy="true">Loading…</p>;
  const revisions = [
    ...(current.data
      ? [
          {
            revision: current.data.revision,
            label: 'current',
            actor: '',
            at: '',
          },
        ]
      : []),
    ...data.items.map((item) => ({
      revision: item.revision,
      label: item.deleted_at ? `${item.reason} (it was deleted)` : item.reason,
      actor: item.actor,
      at: item.snapshot_at,
    })),
  ];

  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History of {id}</h1>
      <p>
        <a href={href('doc', id)}>Back to the document</a>
        {data.deleted && (
          <>
            {' · '}This document is deleted.{' '}
            <button type="button" onClick={() => restore(undefined)}>
              Undelete
            </button>
          </>
        )}
      </p>
      {message && <p role="status">{message}</p>}
      <table>
        <caption>
          Revisions, newest first: each earlier one with the change that replaced it, who made it
          and when. Pick two to compare.
        </caption>
        <thead>
          <tr>
            <th scope="col">Revision</th>
            <th scope="col">Replaced by (change)</th>
            <th scope="col">Replaced by (who)</th>
            <th scope="col">Replaced at</th>
            <th scope="col">Compare from</th>
            <th scope="col">Compare to</th>
            <th scope="col">Restore</th>
          </tr>
        </thead>
        <tbody>
          {revisions.map((entry) => (
            <tr key={`${entry.revision}-${entry.at}`}>
              <td>{entry.revision}</td>
              <td>{entry.label === 'current' ? 'nothing: the current revision' : entry.label}</td>
              <td>{entry.actor}</td>
              <td>{formatTime(entry.at)}</td>
              <td>
                <input
                  type="radio"
                  name="from"
                  aria-label={`Compare from revision ${entry.revision}`}
                  checked={from === entry.revision}
                  onChange={() => setFrom(entry.revision)}
                />
              </td>
              <td>
                <input
                  type="radio"
                  name="to"
                  aria-label={`Compare to revision ${entry.revision}`}
                  checked={to === entry.revision}
                  onChange={() => setTo(entry.revision)}
                />
              </td>
              <td>
                {entry.label !== 'current' && (
                  <button type="button" onClick={() => restore(entry.revision)}>
                    Restore revision {entry.revision}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {data.next_offset !== null && (
        <button type="button" onClick={() => setOffset(data.next_offset!)}>
          Older revisions
        </button>
      )}
      {from !== undefined &&
        to !== undefined &&
        (diff.error ? (
          <Failure error={diff.error} />
        ) : diff.data?.[0] !== undefined && diff.data?.[1] !== undefined ? (
          <LineDiff
            before={diff.data[0]}
            after={diff.data[1]}
            beforeLabel={`revision ${from}`}
            afterLabel={`revision ${to}`}
          />
        ) : (
          <p aria-busy="true">Loading the revisions…</p>
        ))}
    </section>
  );
}
