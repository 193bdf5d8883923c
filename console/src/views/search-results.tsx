import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { renderMarkdown, snippetHtml } from '../markdown';
import { connectView, documentUri, followLink, type ViewHost } from './view-app';
import './views.css';

interface Hit {
  document_id: string;
  title: string;
  score: number;
  heading_path: string;
  snippet: string;
  source_uri?: string;
}

interface SearchAnswer {
  results: Hit[];
  mode: string;
  degraded_reason?: string;
}

type Reading =
  | { readonly state: 'loading'; readonly id: string }
  | { readonly state: 'read'; readonly id: string; readonly html: string }
  | { readonly state: 'failed'; readonly id: string; readonly message: string };

/**
 * The results view of `search_knowledge`: the query, each hit with its heading path and
 * highlighted passage; a hit opens in place, read as a resource (`kb://<id>`) and rendered,
 * and links between documents open the next one.
 */
function SearchResults({ host }: { host: ViewHost }) {
  const app = host.app;
  const [query, setQuery] = useState<string>();
  const [answer, setAnswer] = useState<SearchAnswer>();
  const [failed, setFailed] = useState<string>();
  const [reading, setReading] = useState<Reading>();

  useEffect(() => {
    host.onInput(({ arguments: args }) => {
      if (typeof args?.query === 'string') setQuery(args.query);
    });
    host.onResult((result) => {
      const data = result.structuredContent as SearchAnswer | undefined;
      if (result.isError || data === undefined) {
        const text = result.content?.find((item) => item.type === 'text');
        setFailed(text?.type === 'text' ? text.text : 'The search failed.');
        return;
      }
      setFailed(undefined);
      setAnswer(data);
    });
  }, [host]);

  async function open(id: string) {
    setReading({ state: 'loading', id });
    try {
      const read = await app.readServerResource({ uri: documentUri(id) });
      const first = read.contents[0];
      const text = first !== undefined && 'text' in first ? first.text : '';
      setReading({ state: 'read', id, html: renderMarkdown(text, id) });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      setReading({ state: 'failed', id, message });
    }
  }

  if (reading !== undefined) {
    return (
      <article aria-labelledby="reading-title">
        <button type="button" class="link" onClick={() => setReading(undefined)}>
          ← Back to the results
        </button>
        <h1 id="reading-title" class="doc-id">
          {reading.id}
        </h1>
        {reading.state === 'loading' && <p role="status">Reading…</p>}
        {reading.state === 'failed' && <p role="alert">Could not read it: {reading.message}</p>}
        {reading.state === 'read' && (
          <div
            class="markdown"
            onClick={(event) => followLink(event, app, (id) => void open(id))}
            dangerouslySetInnerHTML={{ __html: reading.html }}
          />
        )}
      </article>
    );
  }

  return (
    <section aria-labelledby="results-title">
      <h1 id="results-title">{query ? `Results for “${query}”` : 'Search results'}</h1>
      {failed && <p role="alert">{failed}</p>}
      {answer === undefined && !failed && <p role="status">Waiting for the search…</p>}
      {answer?.degraded_reason && <p class="note">{answer.degraded_reason}</p>}
      {answer?.results.length === 0 && <p>No document matched.</p>}
      {answer && answer.results.length > 0 && (
        <ol class="hits">
          {answer.results.map((hit) => (
            <li key={hit.document_id}>
              <button
                type="button"
                class="link hit-title"
                onClick={() => void open(hit.document_id)}
              >
                {hit.title || hit.document_id}
              </button>
              <div class="doc-id">{hit.document_id}</div>
              {hit.heading_path && <div class="heading-path">{hit.heading_path}</div>}
              <p class="snippet" dangerouslySetInnerHTML={{ __html: snippetHtml(hit.snippet) }} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

render(
  <SearchResults host={connectView('agent-data-search-results')} />,
  document.getElementById('view')!,
);
