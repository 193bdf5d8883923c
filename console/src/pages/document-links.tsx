import { useState } from 'preact/hooks';
import {
  documentPath,
  request,
  type Backlinks,
  type DocumentLinks,
  type Neighbourhood,
} from '../api';
import { layoutOf, shortLabel } from '../graph-layout';
import { useLoad } from '../load';
import { href } from '../route';
import { Failure } from './failure';

/** Documents the graph shows at most. */
const GRAPH_LIMIT = 40;
const BACKLINKS_PAGE = 20;

/** The documents linking to one, a page at a time, each with the passage that links. */
export function BacklinksSection({ id }: { id: string }) {
  const [pages, setPages] = useState<Backlinks[]>([]);
  const first = useLoad(async () => {
    const page = await request<Backlinks>(documentPath(id, `/backlinks?limit=${BACKLINKS_PAGE}`));
    setPages([page]);
    return page;
  }, [id]);
  const [message, setMessage] = useState('');
  const last = pages.at(-1);

  async function more() {
    try {
      const page = await request<Backlinks>(
        documentPath(
          id,
          `/backlinks?limit=${BACKLINKS_PAGE}&cursor=${encodeURIComponent(last!.next_cursor!)}`,
        ),
      );
      setPages([...pages, page]);
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  return (
    <section aria-labelledby="backlinks-title" class="links-section">
      <h2 id="backlinks-title">Linked from{first.data ? ` (${first.data.count})` : ''}</h2>
      {first.error ? (
        <Failure error={first.error} />
      ) : first.data === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : first.data.count === 0 ? (
        <p>No document links here.</p>
      ) : (
        <>
          <ul class="backlinks">
            {pages
              .flatMap((page) => page.backlinks)
              .map((backlink) => (
                <li key={backlink.document_id}>
                  <a href={href('doc', backlink.document_id)}>
                    {backlink.title || backlink.document_id}
                  </a>{' '}
                  <code class="count">{backlink.document_id}</code>
                  {backlink.links > 1 && <span class="count"> · {backlink.links} links</span>}
                  <blockquote class="passage">{backlink.passage}</blockquote>
                </li>
              ))}
          </ul>
          {last?.next_cursor && (
            <button type="button" onClick={more}>
              More documents linking here
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

/** The links of a document that resolve to no document it may read. */
export function BrokenLinksSection({ links }: { links: DocumentLinks }) {
  const broken = links.links.filter((link) => link.document_id === null);
  return (
    <section aria-labelledby="broken-title" class="links-section">
      <h2 id="broken-title">Broken links ({broken.length})</h2>
      {broken.length === 0 ? (
        <p>Every link of this document leads to a document.</p>
      ) : (
        <ul class="broken">
          {broken.map((link) => (
            <li key={link.start}>
              “{link.label}” → <code>{link.target}</code>
              {link.fragment !== null && <code>#{link.fragment}</code>}{' '}
              <span class="count">({kindLabel(link.kind)})</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function kindLabel(kind: DocumentLinks['links'][number]['kind']): string {
  return kind === 'wikilink' ? 'wikilink' : kind === 'uri' ? 'kb:// URI' : 'markdown link';
}

/**
 * The documents two links away either way, drawn in rings around this one: each a link to
 * its page (reached with Tab, opened with Enter), the links between them as arrows.
 */
export function NeighbourhoodGraph({ id }: { id: string }) {
  const loaded = useLoad(
    () => request<Neighbourhood>(documentPath(id, `/neighbourhood?depth=2&limit=${GRAPH_LIMIT}`)),
    [id],
  );
  if (loaded.error) return <Failure error={loaded.error} />;
  if (loaded.data === undefined) return <p aria-busy="true">Loading the neighbourhood…</p>;
  const neighbourhood = loaded.data;
  if (neighbourhood.neighbours.length === 0) {
    return (
      <section aria-labelledby="graph-title" class="links-section">
        <h2 id="graph-title">Neighbourhood</h2>
        <p>No link leads to or from this document.</p>
      </section>
    );
  }
  const layout = layoutOf(neighbourhood);
  return (
    <section aria-labelledby="graph-title" class="links-section">
      <h2 id="graph-title">Neighbourhood</h2>
      <figure class="graph">
        <svg
          viewBox={`0 0 ${layout.width} ${layout.height}`}
          role="group"
          aria-label={`Documents within two links of ${neighbourhood.title || id}`}
        >
          <defs>
            <marker
              id="arrow"
              viewBox="0 0 10 10"
              refX="19"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto-start-reverse"
            >
              <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
            </marker>
          </defs>
          <g aria-hidden="true">
            {layout.edges.map((edge) => (
              <line
                key={`${edge.from.id}\u0000${edge.to.id}`}
                class="edge"
                x1={edge.from.x}
                y1={edge.from.y}
                x2={edge.to.x}
                y2={edge.to.y}
                marker-end="url(#arrow)"
              />
            ))}
          </g>
          {layout.nodes.map((node) => {
            const shape = (
              <>
                <circle cx={node.x} cy={node.y} r={node.depth === 0 ? 11 : 8} />
                <text x={node.x} y={node.y + 24} text-anchor="middle">
                  {shortLabel(node.title || node.id)}
                </text>
              </>
            );
            return node.depth === 0 ? (
              <g
                key={node.id}
                class="node root"
                aria-label={`This document: ${node.title || node.id}`}
              >
                {shape}
              </g>
            ) : (
              <a
                key={node.id}
                href={href('doc', node.id)}
                class={`node depth-${node.depth}`}
                aria-label={`${node.title || node.id} (${node.id}), ${node.depth} link${node.depth === 1 ? '' : 's'} away`}
              >
                <title>{node.id}</title>
                {shape}
              </a>
            );
          })}
        </svg>
        <figcaption>
          {neighbourhood.neighbours.length} documents within two links
          {neighbourhood.truncated ? ` (the ${GRAPH_LIMIT} nearest)` : ''}; arrows go from the
          linking document to the linked one.
        </figcaption>
      </figure>
    </section>
  );
}
