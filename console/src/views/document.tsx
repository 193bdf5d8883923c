import type { App } from '@modelcontextprotocol/ext-apps';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { renderMarkdown } from '../markdown';
import { connectView, failureOf, followLink, type ViewHost } from './view-app';
import './views.css';

/** The fields of a `get_document` result the view shows. */
interface ShownDocument {
  document_id: string;
  title: string;
  tags: string[];
  metadata: Record<string, unknown>;
  revision: number;
  updated_at: string;
  body: string;
  truncated: boolean;
}

type Saving =
  | { readonly state: 'idle' }
  | { readonly state: 'saving' }
  | { readonly state: 'conflict'; readonly current?: number }
  | { readonly state: 'failed'; readonly message: string };

/**
 * The document view of `get_document`: the body rendered and sanitised as in the console,
 * where it came from (its metadata) and its revision, links that open other documents, and
 * an editor whose save is `update_document` with `expected_revision` = the revision shown, so
 * a change made meanwhile is reported, never overwritten.
 */
function DocumentView({ host }: { host: ViewHost }) {
  const app = host.app;
  const [doc, setDoc] = useState<ShownDocument>();
  const [failed, setFailed] = useState<string>();
  const [draft, setDraft] = useState<string>();
  const [saving, setSaving] = useState<Saving>({ state: 'idle' });

  function show(result: Parameters<NonNullable<App['ontoolresult']>>[0]) {
    const failure = failureOf(result);
    if (failure !== undefined || result.structuredContent === undefined) {
      setFailed(failure?.message ?? 'The document could not be read.');
      return;
    }
    setFailed(undefined);
    setDoc(result.structuredContent as unknown as ShownDocument);
  }

  useEffect(() => host.onResult(show), [host]);

  async function open(id: string) {
    setDraft(undefined);
    setSaving({ state: 'idle' });
    show(await app.callServerTool({ name: 'get_document', arguments: { document_id: id } }));
  }

  async function edit(current: ShownDocument) {
    if (!current.truncated) return setDraft(current.body);
    // The shown body was cut: edit the whole text, at the same revision.
    const full = await app.callServerTool({
      name: 'get_document_for_rewrite',
      arguments: { document_id: current.document_id },
    });
    const body = (full.structuredContent as { body?: string; revision?: number } | undefined)?.body;
    if (failureOf(full) !== undefined || body === undefined) {
      setSaving({
        state: 'failed',
        message: failureOf(full)?.message ?? 'Could not read it whole.',
      });
      return;
    }
    setDraft(body);
  }

  async function save(current: ShownDocument, content: string) {
    setSaving({ state: 'saving' });
    let result: Awaited<ReturnType<App['callServerTool']>>;
    try {
      result = await app.callServerTool({
        name: 'update_document',
        arguments: {
          document_id: current.document_id,
          content,
          expected_revision: current.revision,
        },
      });
    } catch (error) {
      // The host refused the call or lost it: say so, and let the user try again.
      setSaving({
        state: 'failed',
        message: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    const failure = failureOf(result);
    if (failure?.code === 'REVISION_CONFLICT') {
      const now = failure.current_revision;
      setSaving({ state: 'conflict', current: typeof now === 'number' ? now : undefined });
      return;
    }
    if (failure !== undefined) {
      setSaving({ state: 'failed', message: failure.message });
      return;
    }
    await open(current.document_id);
  }

  if (failed !== undefined) return <p role="alert">{failed}</p>;
  if (doc === undefined) return <p role="status">Waiting for the document…</p>;
  const provenance = Object.entries(doc.metadata ?? {});
  return (
    <article aria-labelledby="doc-title">
      <h1 id="doc-title">{doc.title || doc.document_id}</h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd class="doc-id">{doc.document_id}</dd>
        <dt>Revision</dt>
        <dd data-testid="revision">{doc.revision}</dd>
        <dt>Updated</dt>
        <dd>{doc.updated_at}</dd>
        {doc.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>{doc.tags.join(', ')}</dd>
          </>
        )}
        {provenance.map(([name, value]) => (
          <>
            <dt key={`k-${name}`}>{name}</dt>
            <dd key={`v-${name}`}>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
          </>
        ))}
      </dl>
      {saving.state === 'conflict' && (
        <div role="alert" class="conflict">
          <p>
            Not saved: someone changed this document after revision {doc.revision}
            {saving.current === undefined ? '' : ` (it is now at revision ${saving.current})`}. Your
            text is still in the editor; load the current version to see their change, then apply
            yours again.
          </p>
          <button type="button" onClick={() => void open(doc.document_id)}>
            Load the current version
          </button>
        </div>
      )}
      {saving.state === 'failed' && <p role="alert">Not saved: {saving.message}</p>}
      {draft === undefined ? (
        <>
          <button type="button" onClick={() => void edit(doc)}>
            Edit
          </button>
          {doc.truncated && <p class="note">The body is long: only its beginning is shown.</p>}
          <div
            class="markdown"
            onClick={(event) => followLink(event, app, (id) => void open(id))}
            dangerouslySetInnerHTML={{ __html: renderMarkdown(doc.body, doc.document_id) }}
          />
        </>
      ) : (
        // Not a <form>: a host's sandbox may leave out allow-forms, and then the browser drops
        // a submission before any submit event, so the save would silently never happen.
        <div class="editor" role="group" aria-label="Edit the document">
          <label for="draft">Markdown</label>
          <textarea
            id="draft"
            rows={16}
            value={draft}
            onInput={(event) => setDraft((event.target as HTMLTextAreaElement).value)}
          />
          <div class="actions">
            <button
              type="button"
              disabled={saving.state === 'saving'}
              onClick={() => void save(doc, draft)}
            >
              Save as revision {doc.revision + 1}
            </button>
            <button type="button" class="link" onClick={() => setDraft(undefined)}>
              Cancel
            </button>
          </div>
        </div>
      )}
    </article>
  );
}

render(
  <DocumentView host={connectView('agent-data-document')} />,
  document.getElementById('view')!,
);
