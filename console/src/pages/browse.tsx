import { request, type ListResult } from '../api';
import { formatTime, useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';

const PAGE_SIZE = 50;

interface Folders {
  parent: string;
  documents_here: number;
  folders: Array<{ folder: string; documents: number }>;
  truncated: boolean;
}

/** A folder: its subfolders with their counts, and its documents a page at a time. */
export function BrowsePage({ folder, page }: { folder: string; page: number }) {
  const pageNumber = Number.isInteger(page) && page > 0 ? page : 1;
  const folders = useLoad(
    () =>
      request<Folders>(
        `/documents/folders${folder ? `?parent=${encodeURIComponent(folder)}` : ''}`,
      ),
    [folder],
  );
  const documents = useLoad(
    () =>
      request<ListResult>(
        `/documents?prefix=${encodeURIComponent(folder ? `${folder}/` : '')}&limit=${PAGE_SIZE}&offset=${(pageNumber - 1) * PAGE_SIZE}`,
      ),
    [folder, pageNumber],
  );
  const crumbs = folder === '' ? [] : folder.split('/');
  const here = documents.data?.items;

  return (
    <section aria-labelledby="browse-title">
      <nav aria-label="Folder path" class="crumbs">
        <a href={href('browse')}>All documents</a>
        {crumbs.map((name, i) => (
          <span key={i}>
            {' / '}
            <a href={href('browse', crumbs.slice(0, i + 1).join('/'))}>{name}</a>
          </span>
        ))}
      </nav>
      <h1 id="browse-title">{folder === '' ? 'All documents' : folder}</h1>
      <p class="actions">
        <a href={href('new', '', { folder })}>New document here</a>
        <a href={href('broken', folder)}>Broken links{folder === '' ? '' : ' here'}</a>
      </p>
      <h2>Folders</h2>
      {folders.error ? (
        <Failure error={folders.error} />
      ) : folders.data === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : folders.data.folders.length === 0 ? (
        <p>No folders below this one.</p>
      ) : (
        <ul class="folders">
          {folders.data.folders.map((entry) => (
            <li key={entry.folder}>
              <a href={href('browse', entry.folder)}>
                {entry.folder.slice(folder ? folder.length + 1 : 0)}/
              </a>{' '}
              <span class="count">
                {entry.documents} document{entry.documents === 1 ? '' : 's'}
              </span>
            </li>
          ))}
          {folders.data.truncated && <li>… more folders than shown</li>}
        </ul>
      )}
      <h2>Documents{folder === '' ? '' : ' in this folder and below'}</h2>
      {documents.error ? (
        <Failure error={documents.error} />
      ) : documents.data === undefined || here === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          {here.length === 0 ? (
            <p>No documents.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Id</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Revision</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Vectors</th>
                </tr>
              </thead>
              <tbody>
                {here.map((item) => (
                  <tr key={item.document_id}>
                    <td>
                      <a href={href('doc', item.document_id)}>{item.title || item.document_id}</a>
                    </td>
                    <td>
                      <code>{item.document_id}</code>
                    </td>
                    <td>{item.tags.join(', ')}</td>
                    <td>{item.revision}</td>
                    <td>{formatTime(item.updated_at)}</td>
                    <td>{item.vector_status}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <nav aria-label="Pages" class="pager">
            {pageNumber > 1 && (
              <a href={href('browse', folder, { page: String(pageNumber - 1) })}>Previous page</a>
            )}
            <span>Page {pageNumber}</span>
            {documents.data.next_offset != null && (
              <a href={href('browse', folder, { page: String(pageNumber + 1) })}>Next page</a>
            )}
          </nav>
        </>
      )}
    </section>
  );
}
