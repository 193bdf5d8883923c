import type { CreateDocumentInput } from '../src/documents/documents.service';

let sequence = 0;

/** A valid document input; override what the test is about. */
export function aDocument(overrides: Partial<CreateDocumentInput> = {}): CreateDocumentInput {
  sequence += 1;
  return {
    document_id: `knowledge/test/doc-${sequence}.md`,
    body: `# Document ${sequence}\n\nSome text about topic ${sequence}.`,
    tags: ['test'],
    ...overrides,
  };
}
