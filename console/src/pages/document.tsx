import { useEffect, useRef, useState } from 'preact/hooks';
import { documentPath, request, type Document, type DocumentLinks } from '../api';
import { formatTime, useLoad } from '../load';
import { renderMarkdown } from '../markdown';
import { folderOf, go, href } from '../route';
import { BacklinksSection, BrokenLinksSection, NeighbourhoodGraph } from './document-links';
import { Failure } from './failure';

/** One document rendered, its metadata, its addresses, and what can be done with it. */
export function DocumentPage({ id, at }: { id: string; at?: string }) {
  const loaded = useLoad(() => request<Document>(documentPath(id)), [id]);
  // Its links as the server resolves them: wikilinks and kb:// URIs become links too.
  const links = useLoad(() => request<DocumentLinks>(documentPath(id, '/links')), [id]);
  const body = useRef<HTMLDivElement>(null);
  const [message, setMessage] = useState('');

  useEffect(() => {
    if (!at || !body.current) return;
    // Open at the passage: the last heading of its path.
    const wanted = at.split(' › ').at(-1)!.trim().toLowerCase();
    const heading = [...body.current.querySelectorAll('h1, h2, h3, h4, h5, h6')].find(
      (element) => element.textContent?.trim().toLowerCase() === wanted,
    ) as HTMLElement | undefined;
    if (heading) {
      heading.classList.add('at-passage');
      heading.setAttribute('tabindex', '-1');
      heading.scrollIntoView();
      heading.focus();
    }
  }, [loaded.data, links.data, at]);

  if (loaded.error) return <Failure error={loaded.error} />;
  const doc = loaded.data;
  if (doc === undefined) return <p aria-busy="true">Loading…</p>;
  const restUrl = `${location.origin}${documentPath(doc.document_id)}`;
  const resourceUri = `kb://${doc.document_id}`;
  // Who may write it is the server's to say (doc.source); the metadata says where it came
  // from, which a copy (an export imported elsewhere) or a document its source let go keeps.
  const owner = doc.source ?? undefined;
  const provenance = provenanceOf(doc.metadata);
  // The note names the source that keeps it, with the reading's time when the metadata has it.
  const source =
    owner === undefined
      ? provenance
      : { id: owner.id, uri: owner.uri, fetchedAt: provenance?.fetchedAt };

  async function remove() {
    if (!confirm(`Delete ${doc!.document_id}? It can be restored from its history.`)) return;
    try {
      await request(documentPath(doc!.document_id), {
        method: 'DELETE',
        headers: { 'If-Match': `"${doc!.revision}"` },
      });
      go('browse', folderOf(doc!.document_id));
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  return (
    <article aria-labelledby="doc-title">
      <nav aria-label="Folder path" class="crumbs">
        <a href={href('browse')}>All documents</a>
        {folderOf(doc.document_id)
          .split('/')
          .filter(Boolean)
          .map((name, i, names) => (
            <span key={i}>
              {' / '}
              <a href={href('browse', names.slice(0, i + 1).join('/'))}>{name}</a>
            </span>
          ))}
      </nav>
      <h1 id="doc-title">{doc.title || doc.document_id}</h1>
      <div class="actions">
        {/* A source's document is refused to every other writer: no edit or delete to offer. */}
        {owner === undefined && <a href={href('edit', doc.document_id)}>Edit</a>}
        <a href={href('history', doc.document_id)}>History</a>
        {owner === undefined && (
          <button type="button" class="link danger" onClick={remove}>
            Delete
          </button>
        )}
      </div>
      {source !== undefined && <ProvenanceNote source={source} kept={owner !== undefined} />}
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      <dl class="meta">
        <dt>Id</dt>
        <dd>
          <code>{doc.document_id}</code>
        </dd>
        <dt>Revision</dt>
        <dd>{doc.revision}</dd>
        <dt>Tags</dt>
        <dd>{doc.tags.length ? doc.tags.join(', ') : 'none'}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(doc.updated_at)}</dd>
        <dt>Vectors</dt>
        <dd>{doc.vector_status}</dd>
        <dt>MCP resource</dt>
        <dd>
          <input aria-label="MCP resource URI" readOnly value={resourceUri} onFocus={selectAll} />
        </dd>
        <dt>REST</dt>
        <dd>
          <input aria-label="REST URL" readOnly value={restUrl} onFocus={selectAll} />
        </dd>
        {Object.keys(doc.metadata).length > 0 && (
          <>
            <dt>Metadata</dt>
            <dd>
              <pre>{JSON.stringify(doc.metadata, null, 2)}</pre>
            </dd>
          </>
        )}
      </dl>
      <div
        class="markdown"
        ref={body}
        // Sanitised by DOMPurify in renderMarkdown: nothing in a body can run.
        dangerouslySetInnerHTML={{
          __html: renderMarkdown(doc.body, doc.document_id, links.data?.links),
        }}
      />
      <BacklinksSection id={doc.document_id} />
      {links.data !== undefined && <BrokenLinksSection links={links.data} />}
      <NeighbourhoodGraph id={doc.document_id} />
    </article>
  );
}

interface Provenance {
  readonly id: string;
  readonly uri?: string;
  readonly fetchedAt?: string;
}

/** Where a synced document came from, as its source wrote into its metadata. */
function provenanceOf(metadata: Record<string, unknown>): Provenance | undefined {
  const { source_id: id, source_uri: uri, fetched_at: fetchedAt } = metadata;
  if (typeof id !== 'string') return undefined;
  return {
    id,
    uri: typeof uri === 'string' ? uri : undefined,
    fetchedAt: typeof fetchedAt === 'string' ? fetchedAt : undefined,
  };
}

function ProvenanceNote({ source, kept }: { source: Provenance; kept: boolean }) {
  const link = source.uri === undefined ? undefined : openable(source.uri);
  return (
    <div class="notice provenance" role="note" aria-label="Provenance">
      {kept ? (
        <p>
          Read-only: kept in sync by source <a href={href('sources', source.id)}>{source.id}</a>.
          Change the original; the source's next run brings the change here.
        </p>
      ) : (
        <p>
          Came from source <code>{source.id}</code>, which no longer keeps it in sync: it can be
          edited here.
        </p>
      )}
      {source.uri !== undefined && (
        <p>
          Original:{' '}
          {link === undefined ? (
            <code>{source.uri}</code>
          ) : (
            <a href={link} rel="noreferrer">
              {source.uri}
            </a>
          )}
          {source.fetchedAt !== undefined && <>, read {formatTime(source.fetchedAt)}</>}
        </p>
      )}
    </div>
  );
}

/**
 * The original as an address a browser can open: a web page's URL. A git source's address
 * (`<repository>@<commit>:<path>`) names a blob, not a page, and a folder source's is a path
 * on the server's machine: both are shown as text.
 */
function openable(uri: string): string | undefined {
  if (/@[0-9a-f]{40,64}:/.test(uri)) return undefined;
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function selectAll(event: FocusEvent) {
  (event.target as HTMLInputElement).select();
}
