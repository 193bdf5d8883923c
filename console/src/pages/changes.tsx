import { useState } from 'preact/hooks';
import { request } from '../api';
import { formatTime, useLoad } from '../load';
import { go, href } from '../route';
import { Failure } from './failure';
import { fieldOf } from '../form';

interface Change {
  id: number;
  operation: string;
  document_id: string;
  revision: number | null;
  actor: string;
  at: string;
}

/** What changed, newest first, over the whole base or a folder; by who; since when. */
export function ChangesPage({ query }: { query: URLSearchParams }) {
  const folder = query.get('folder') ?? '';
  const actor = query.get('actor') ?? '';
  const since = query.get('since') ?? startOfToday();
  const cursor = query.get('cursor') ?? '';
  const [form, setForm] = useState({ folder, actor, since: since.slice(0, 16) });
  const set = fieldOf(form, setForm);
  const feed = useLoad(() => {
    const params = new URLSearchParams({ limit: '50' });
    if (folder) params.set('folder', folder);
    if (actor) params.set('actor', actor);
    if (since) params.set('since', new Date(since).toISOString());
    if (cursor) params.set('cursor', cursor);
    return request<{ changes: Change[]; next_cursor: string | null }>(`${CHANGES_PATH}?${params}`);
  }, [folder, actor, since, cursor]);

  return (
    <section aria-labelledby="changes-title">
      <h1 id="changes-title">Changes</h1>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          go('changes', '', {
            folder: form.folder.trim(),
            actor: form.actor.trim(),
            since: form.since ? new Date(form.since).toISOString() : undefined,
          });
        }}
      >
        <label for="changes-folder">Folder</label>
        <input id="changes-folder" value={form.folder} placeholder="all" onInput={set('folder')} />
        <label for="changes-actor">Who</label>
        <input id="changes-actor" value={form.actor} placeholder="anyone" onInput={set('actor')} />
        <label for="changes-since">Since</label>
        <input id="changes-since" type="datetime-local" value={form.since} onInput={set('since')} />
        <button type="submit">Show</button>
      </form>
      {feed.error ? (
        <Failure error={feed.error} />
      ) : feed.data === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : feed.data.changes.length === 0 ? (
        <p>
          No change{folder ? ` under ${folder}` : ''} since {formatTime(since)}.
        </p>
      ) : (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">Document</th>
                <th scope="col">Revision</th>
                <th scope="col">Who</th>
              </tr>
            </thead>
            <tbody>
              {feed.data.changes.map((change) => (
                <tr key={change.id}>
                  <td>{formatTime(change.at)}</td>
                  <td>{change.operation}</td>
                  <td>
                    <a href={href('history', change.document_id)}>{change.document_id}</a>
                  </td>
                  <td>{change.revision ?? ''}</td>
                  <td>{change.actor}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {feed.data.next_cursor && (
            <a href={href('changes', '', { folder, actor, since, cursor: feed.data.next_cursor })}>
              Older changes
            </a>
          )}
        </>
      )}
    </section>
  );
}

/** The admin route of the change feed. */
const CHANGES_PATH = '/documents/changes';

function startOfToday(): string {
  const now = new Date();
  return new Date(now.getFullYear(), now.getMonth(), now.getDate()).toISOString();
}
