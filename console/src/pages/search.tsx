import { useState } from 'preact/hooks';
import { request, type SearchHit } from '../api';
import { useLoad } from '../load';
import { snippetHtml } from '../markdown';
import { go, href } from '../route';
import { Failure } from './failure';
import { fieldOf } from '../form';

const MODES = ['hybrid', 'lexical', 'vector'] as const;

/** One box, the three modes, folder and tag filters; each result opens at its passage. */
export function SearchPage({ query }: { query: URLSearchParams }) {
  const q = query.get('q') ?? '';
  const mode = query.get('mode') ?? 'hybrid';
  const folder = query.get('folder') ?? '';
  const tags = query.get('tags') ?? '';
  const [form, setForm] = useState({ q, mode, folder, tags });
  const results = useLoad(async () => {
    if (q.trim() === '') return undefined;
    const params = new URLSearchParams({ query: q, mode, limit: '20' });
    if (folder) params.set('prefix', folder.endsWith('/') ? folder : `${folder}/`);
    for (const tag of tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean)) {
      params.append('tags', tag);
    }
    return request<{ results: SearchHit[]; degraded_reason?: string }>(`/search?${params}`);
  }, [q, mode, folder, tags]);

  function submit(event: Event) {
    event.preventDefault();
    go('search', '', form);
  }
  const set = fieldOf(form, setForm);

  return (
    <section aria-labelledby="search-title">
      <h1 id="search-title">Search</h1>
      <form class="search" role="search" onSubmit={submit}>
        <label for="q">Search for</label>
        <input id="q" type="search" value={form.q} onInput={set('q')} />
        <label for="mode">Mode</label>
        <select id="mode" value={form.mode} onChange={set('mode')}>
          {MODES.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <label for="folder">In folder</label>
        <input id="folder" value={form.folder} onInput={set('folder')} placeholder="any" />
        <label for="tags">Tags</label>
        <input id="tags" value={form.tags} onInput={set('tags')} placeholder="comma-separated" />
        <button type="submit">Search</button>
      </form>
      {results.error ? (
        <Failure error={results.error} />
      ) : results.data === undefined ? (
        q && <p aria-busy="true">Searching…</p>
      ) : (
        <>
          {results.data.degraded_reason && <p class="notice">{results.data.degraded_reason}</p>}
          <p role="status">
            {results.data.results.length} result{results.data.results.length === 1 ? '' : 's'}
          </p>
          <ol class="results">
            {results.data.results.map((hit) => (
              <li key={hit.document_id}>
                <a href={href('doc', hit.document_id, { at: hit.heading_path || undefined })}>
                  {hit.title || hit.document_id}
                </a>{' '}
                <code>{hit.document_id}</code>
                {hit.heading_path && <div class="heading-path">{hit.heading_path}</div>}
                <p class="snippet" dangerouslySetInnerHTML={{ __html: snippetHtml(hit.snippet) }} />
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
