/** Valid arguments for every tool, against documents under `prefix`. */
export function callsFor(prefix: string, pageUrl: string): Record<string, Record<string, unknown>> {
  return {
    search_knowledge: { query: 'release checklist', limit: 5, prefix: `${prefix}/` },
    list_documents: { prefix: `${prefix}/`, limit: 10 },
    get_document: { document_id: `${prefix}/seed.md` },
    get_document_for_rewrite: { path: `${prefix}/seed.md` },
    batch_read: { document_ids: [`${prefix}/seed.md`, `${prefix}/missing.md`], max_chars: 5 },
    follow_links: { document_id: `${prefix}/seed.md`, depth: 2 },
    upload_document: {
      document_id: `${prefix}/new.md`,
      content: '# New\n\nWritten by the SDK client.',
      tags: ['sdk'],
    },
    update_document: {
      document_id: `${prefix}/new.md`,
      content: '# New\n\nUpdated.',
      expected_revision: 1,
    },
    patch_document: {
      document_id: `${prefix}/new.md`,
      old_str: 'Updated.',
      new_str: 'Patched.',
      expected_revision: 2,
    },
    delete_document: { document_id: `${prefix}/new.md` },
    ingest_document: { url: `${pageUrl}/guide.html`, document_id: `${prefix}/ingested.md` },
  };
}
