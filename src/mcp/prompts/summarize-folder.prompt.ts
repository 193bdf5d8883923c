import { Injectable } from '@nestjs/common';
import { invalidArgument } from '../../common/domain-error';
import { validateDocumentId } from '../../documents/document-id';
import { DocumentsService } from '../../documents/documents.service';
import { DocumentListingsService } from '../../documents/document-listings.service';
import { DocumentResources, MARKDOWN } from '../resources/document-resources';
import { documentUri, folderUri } from '../resources/resource-uri';
import { linkMessage, McpPrompt, userMessage, type PromptContext } from './prompt';

/** Documents embedded whole, and the characters they may add up to; the rest are linked. */
const EMBEDDED_DOCUMENTS = 20;
const EMBEDDED_CHARS = 60_000;

@Injectable()
export class SummarizeFolderPrompt extends McpPrompt {
  readonly name = 'summarize_folder';
  readonly title = 'Summarise a folder';
  readonly description = `Summarises the documents under one folder (an id prefix such as knowledge/reports): its index and up to ${EMBEDDED_DOCUMENTS} documents are embedded whole, the others linked. The summary cites document ids.`;
  readonly arguments = [
    {
      name: 'folder',
      description: 'The folder to summarise, e.g. knowledge/reports.',
      required: true,
      completion: 'folder',
    },
  ] as const;

  constructor(
    private readonly documents: DocumentsService,
    private readonly listings: DocumentListingsService,
    private readonly resources: DocumentResources,
  ) {
    super();
  }

  async render(args: Readonly<Record<string, string>>, context: PromptContext) {
    const folder = validateDocumentId(args.folder.trim().replace(/\/+$/, ''), 'folder');
    const index = await this.resources.folderIndex(folder, context.access);
    if (index.count === 0)
      throw invalidArgument('folder', `no document is stored under ${folder}/`);
    context.signal.throwIfAborted();
    const listed = await this.listings.list(
      { prefix: `${folder}/`, limit: EMBEDDED_DOCUMENTS },
      context.access,
    );
    const bodies = await this.documents.getMany(
      listed.items.map((item) => item.document_id),
      context.access,
    );
    let budget = EMBEDDED_CHARS;
    const embedded: string[] = [];
    for (const item of listed.items) {
      const document = bodies.get(item.document_id);
      if (document === undefined || document.body.length > budget) continue;
      budget -= document.body.length;
      embedded.push(item.document_id);
    }
    const instructions = [
      `Summarise the folder ${folder}/ of the Agent Data knowledge base.`,
      '',
      `Its index follows (${index.count}${index.truncated ? '+' : ''} documents), then ${embedded.length === index.count ? 'every document' : `${embedded.length} of them`} in full${embedded.length < index.count ? '; read the others with get_document or batch_read if they matter' : ''}.`,
      '',
      'Write:',
      '1. What the folder is about, in two or three sentences.',
      '2. One line per document: what it says that the others do not, with its id in square brackets, e.g. [knowledge/topic/page.md].',
      '3. Themes shared across documents, contradictions between them, and what looks outdated or missing.',
      'Cite ids for every claim; do not add facts the documents do not contain.',
    ].join('\n');
    return {
      description: `Summary of ${folder}/`,
      messages: [
        userMessage({ type: 'text', text: instructions }),
        userMessage({
          type: 'resource',
          resource: { uri: folderUri(folder), mimeType: MARKDOWN, text: index.text },
        }),
        ...listed.items.map((item) => {
          const document = bodies.get(item.document_id);
          return document !== undefined && embedded.includes(item.document_id)
            ? userMessage({
                type: 'resource',
                resource: {
                  uri: documentUri(document.document_id),
                  mimeType: MARKDOWN,
                  text: document.body,
                },
              })
            : linkMessage(item, undefined, context);
        }),
      ],
    };
  }
}
