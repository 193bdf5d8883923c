import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode, invalidArgument } from '../../common/domain-error';
import { DocumentsService } from '../../documents/documents.service';
import { PROFILE_TOOLS } from '../profiles';
import { MARKDOWN } from '../resources/document-resources';
import { documentUri } from '../resources/resource-uri';
import { McpPrompt, userMessage, type PromptContext } from './prompt';

@Injectable()
export class ReviewDocumentPrompt extends McpPrompt {
  readonly name = 'review_document';
  readonly title = 'Review a document before editing';
  readonly description =
    'Reviews one document for accuracy, clarity, structure and stale or contradictory content, and proposes concrete edits as exact old/new text pairs; the document is embedded in the prompt.';
  readonly arguments = [
    {
      name: 'document_id',
      description: 'The document to review, e.g. knowledge/topic/page.md.',
      required: true,
      completion: 'document_id',
    },
    {
      name: 'focus',
      description: 'What to look at most closely, e.g. "outdated figures" (optional).',
      required: false,
    },
  ] as const;

  constructor(private readonly documents: DocumentsService) {
    super();
  }

  async render(args: Readonly<Record<string, string>>, context: PromptContext) {
    const documentId = args.document_id.trim();
    let document;
    try {
      document = await this.documents.get(documentId, context.access);
    } catch (error) {
      if (error instanceof DomainError && error.code === ErrorCode.NOT_FOUND) {
        throw invalidArgument('document_id', `no document ${documentId} exists`);
      }
      if (error instanceof DomainError && error.code === ErrorCode.INVALID_ARGUMENT) {
        throw invalidArgument('document_id', error.message.replace(/^document_id: /, ''));
      }
      throw error;
    }
    const canEdit = (PROFILE_TOOLS[context.profile] as readonly string[]).includes(
      'patch_document',
    );
    const focus = args.focus?.trim();
    const instructions = [
      `Review the document ${document.document_id} (revision ${document.revision}, updated ${document.updated_at}) that follows.`,
      ...(focus ? ['', `Focus on: ${focus}`] : []),
      '',
      'Report, quoting the passages concerned:',
      '1. Statements that look wrong, unsupported or outdated.',
      '2. Passages that are unclear, repeated or out of place, and headings that do not fit their sections.',
      '3. Contradictions with other documents of the knowledge base (search_knowledge finds them; cite their ids in square brackets).',
      '',
      'Then propose each edit as an exact pair: the current text (old_str, copied character for character, long enough to occur once) and its replacement (new_str).',
      canEdit
        ? `Apply edits only when asked, with patch_document and expected_revision ${document.revision}, so that a change made meanwhile is never overwritten.`
        : 'This endpoint is read-only: propose the edits, do not try to apply them.',
    ].join('\n');
    return {
      description: `Review of ${document.document_id}`,
      messages: [
        userMessage({ type: 'text', text: instructions }),
        userMessage({
          type: 'resource',
          resource: {
            uri: documentUri(document.document_id),
            mimeType: MARKDOWN,
            text: document.body,
          },
        }),
      ],
    };
  }
}
