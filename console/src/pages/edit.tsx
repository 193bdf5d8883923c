import { useEffect, useState } from 'preact/hooks';
import { ApiError, documentPath, request, type Document } from '../api';
import { renderMarkdown } from '../markdown';
import { go, href } from '../route';
import { Failure } from './failure';
import { LineDiff } from './line-diff';
import { fieldOf } from '../form';

interface Draft {
  id: string;
  title: string;
  tags: string;
  body: string;
}

/**
 * Create (`folder` given) or edit (`id` given): markdown with a preview, rename/move, every
 * write conditional on the revision read. A 409/412 shows the version saved meanwhile beside
 * the user's, who keeps theirs (saved over the newer revision) or takes the server's.
 */
export function EditPage({ id, folder }: { id?: string; folder?: string }) {
  const creating = id === undefined;
  const [original, setOriginal] = useState<Document | undefined>();
  const [draft, setDraft] = useState<Draft>({
    id: folder ? `${folder}/` : '',
    title: '',
    tags: '',
    body: '',
  });
  const [loadError, setLoadError] = useState<Error | undefined>();
  const [error, setError] = useState('');
  const [conflict, setConflict] = useState<Document | undefined>();
  const [tab, setTab] = useState<'write' | 'preview'>('write');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (creating) return;
    request<Document>(documentPath(id)).then((doc) => {
      setOriginal(doc);
      setDraft({
        id: doc.document_id,
        title: doc.title,
        tags: doc.tags.join(', '),
        body: doc.body,
      });
    }, setLoadError);
  }, [id]);

  if (loadError) return <Failure error={loadError} />;
  if (!creating && original === undefined) return <p aria-busy="true">Loading…</p>;

  const tags = () =>
    draft.tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);

  async function save(event: Event, basedOn = original) {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      if (creating) {
        await request('/documents', {
          method: 'POST',
          body: {
            document_id: draft.id.trim(),
            title: draft.title || undefined,
            tags: tags(),
            body: draft.body,
          },
        });
        go('doc', draft.id.trim());
        return;
      }
      let current = basedOn!;
      const target = draft.id.trim();
      if (target !== current.document_id) {
        current = await request<Document>(documentPath(current.document_id, '/move'), {
          method: 'POST',
          body: { to: target, expected_revision: current.revision },
        });
      }
      await request(documentPath(target), {
        method: 'PUT',
        headers: { 'If-Match': `"${current.revision}"` },
        body: { title: draft.title, tags: tags(), body: draft.body },
      });
      go('doc', target);
    } catch (failure) {
      if (
        failure instanceof ApiError &&
        (failure.status === 409 || failure.status === 412) &&
        !creating
      ) {
        try {
          setConflict(await request<Document>(documentPath(original!.document_id)));
        } catch {
          setError(failure.message);
        }
      } else {
        setError((failure as Error).message);
      }
    } finally {
      setBusy(false);
    }
  }

  const set = fieldOf(draft, setDraft);

  return (
    <section aria-labelledby="edit-title">
      <h1 id="edit-title">{creating ? 'New document' : `Edit ${original!.document_id}`}</h1>
      {conflict && (
        <div class="conflict" role="alert">
          <h2>Someone saved this document meanwhile</h2>
          <p>
            You edited revision {original!.revision}; revision {conflict.revision} was saved by
            someone else. Your text is kept below. Compare, then choose:
          </p>
          <LineDiff
            before={conflict.body}
            after={draft.body}
            beforeLabel={`Saved (revision ${conflict.revision})`}
            afterLabel="Yours"
          />
          <div class="actions">
            <button
              type="button"
              onClick={(event) => {
                setOriginal(conflict);
                setConflict(undefined);
                void save(event, conflict);
              }}
            >
              Keep mine (save over revision {conflict.revision})
            </button>
            <button
              type="button"
              onClick={() => {
                setOriginal(conflict);
                setDraft({
                  id: conflict.document_id,
                  title: conflict.title,
                  tags: conflict.tags.join(', '),
                  body: conflict.body,
                });
                setConflict(undefined);
              }}
            >
              Take theirs (discard my changes)
            </button>
          </div>
        </div>
      )}
      <form onSubmit={(event) => save(event)}>
        <label for="doc-id">Id {creating ? '' : '(change it to rename or move)'}</label>
        <input
          id="doc-id"
          required
          aria-describedby="doc-id-hint"
          value={draft.id}
          onInput={set('id')}
        />
        <p id="doc-id-hint" class="hint">
          A path of folders and a name, such as <code>notes/guides/setup.md</code>.
        </p>
        <label for="doc-title-input">Title</label>
        <input id="doc-title-input" value={draft.title} onInput={set('title')} />
        <label for="doc-tags">Tags (comma-separated)</label>
        <input id="doc-tags" value={draft.tags} onInput={set('tags')} />
        <div role="tablist" aria-label="Body" class="tabs">
          {(['write', 'preview'] as const).map((name) => (
            <button
              key={name}
              type="button"
              role="tab"
              aria-selected={tab === name}
              onClick={() => setTab(name)}
            >
              {name === 'write' ? 'Write' : 'Preview'}
            </button>
          ))}
        </div>
        {tab === 'write' ? (
          <>
            <label for="doc-body">Body (markdown)</label>
            <textarea id="doc-body" rows={20} value={draft.body} onInput={set('body')} />
          </>
        ) : (
          <div
            class="markdown preview"
            role="tabpanel"
            aria-label="Preview"
            dangerouslySetInnerHTML={{ __html: renderMarkdown(draft.body, draft.id) }}
          />
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
          <a href={creating ? href('browse', folder ?? '') : href('doc', original!.document_id)}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
