import { useState } from 'preact/hooks';
import { request, type BrokenLinks } from '../api';
import { useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';

/**
 * The broken links of a folder and everything below it: by document, each link with its text,
 * its target and its passage, a page at a time (the server reads 200 documents with links a
 * page).
 */
export function BrokenPage({ folder }: { folder: string }) {
  const prefix = folder === '' ? '' : `${folder}/`;
  const [pages, setPages] = useState<BrokenLinks[]>([]);
  const [message, setMessage] = useState('');
  const first = useLoad(async () => {
    const page = await request<BrokenLinks>(
      `/documents/links/broken?prefix=${encodeURIComponent(prefix)}`,
    );
    setPages([page]);
    return page;
  }, [prefix]);
  const last = pages.at(-1);
  const items = pages.flatMap((page) => page.items);

  async function more() {
    try {
      const page = await request<BrokenLinks>(
        `/documents/links/broken?prefix=${encodeURIComponent(prefix)}&cursor=${encodeURIComponent(last!.next_cursor!)}`,
      );
      setPages([...pages, page]);
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  return (
    <section aria-labelledby="broken-report-title">
      <nav aria-label="Folder path" class="crumbs">
        <a href={href('browse', folder)}>{folder === '' ? 'All documents' : folder}</a>
      </nav>
      <h1 id="broken-report-title">
        Broken links {folder === '' ? 'in all documents' : `under ${folder}/`}
      </h1>
      {first.error ? (
        <Failure error={first.error} />
      ) : first.data === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          <p role="status">
            {items.length === 0
              ? 'No broken link found.'
              : `${items.length} broken link${items.length === 1 ? '' : 's'} found${last?.next_cursor ? ' so far' : ''}.`}
          </p>
          {items.length > 0 && (
            <table class="broken-report">
              <thead>
                <tr>
                  <th scope="col">In</th>
                  <th scope="col">Link</th>
                  <th scope="col">Leads to</th>
                  <th scope="col">Passage</th>
                </tr>
              </thead>
              <tbody>
                {items.map((item, i) => (
                  <tr key={`${item.document_id}:${i}`}>
                    <td>
                      <a href={href('doc', item.document_id)}>{item.title || item.document_id}</a>
                      <br />
                      <code class="count">{item.document_id}</code>
                    </td>
                    <td>{item.label}</td>
                    <td>
                      <code>
                        {item.target}
                        {item.fragment === null ? '' : `#${item.fragment}`}
                      </code>
                    </td>
                    <td class="passage">{item.passage}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {last?.next_cursor && (
            <button type="button" onClick={more}>
              Read more documents
            </button>
          )}
          {message && (
            <p class="error" role="alert">
              {message}
            </p>
          )}
        </>
      )}
    </section>
  );
}
