import { Injectable, Logger } from '@nestjs/common';
import { validateDocumentId } from '../../documents/document-id';
import { SearchService } from '../../vectors/search/search.service';
import { linkMessage, McpPrompt, userMessage, type PromptContext } from './prompt';

/** Best search hits linked into the prompt, for the model to read first. */
const CANDIDATES = 5;

@Injectable()
export class AnswerQuestionPrompt extends McpPrompt {
  private readonly logger = new Logger('AnswerQuestionPrompt');
  readonly name = 'answer_question';
  readonly title = 'Answer from the knowledge base';
  readonly description =
    'Answers a question from the documents of the knowledge base only, citing the id of the document behind every statement. Links the best search hits for the question; optionally limited to one folder.';
  readonly arguments = [
    { name: 'question', description: 'The question to answer.', required: true },
    {
      name: 'folder',
      description: 'Only use documents under this folder, e.g. knowledge/reports (optional).',
      required: false,
      completion: 'folder',
    },
  ] as const;

  constructor(private readonly search: SearchService) {
    super();
  }

  async render(args: Readonly<Record<string, string>>, context: PromptContext) {
    const question = args.question.trim();
    const folder = args.folder?.trim().replace(/\/+$/, '') || undefined;
    if (folder !== undefined) validateDocumentId(folder, 'folder');
    const hits = await this.candidates(question, folder, context);
    const scope = folder === undefined ? '' : ` with prefix "${folder}/"`;
    const instructions = [
      'Answer the question below from the Agent Data knowledge base only.',
      '',
      `Question: ${question}`,
      '',
      'How to work:',
      `1. Search with search_knowledge${scope}; try other words if the first search finds nothing useful.`,
      `2. Read the most relevant documents whole with get_document or batch_read.${hits.length > 0 ? ' The documents linked below are the best search hits for the question as asked: start with them.' : ''}`,
      '3. Answer concisely. After every statement, cite the document it comes from by id in square brackets, e.g. [knowledge/topic/page.md]. Give figures and names exactly as the documents do.',
      '4. If the documents do not answer the question, say so plainly and say what they do cover; never fill a gap from general knowledge without saying that you do.',
    ].join('\n');
    return {
      description: `Answer "${question.length > 80 ? `${question.slice(0, 80)}…` : question}" from the knowledge base`,
      messages: [
        userMessage({ type: 'text', text: instructions }),
        ...hits.map((hit) => linkMessage(hit, hit.snippet, context)),
      ],
    };
  }

  /** The best hits, or none when search cannot answer now (the text then says to search). */
  private async candidates(question: string, folder: string | undefined, context: PromptContext) {
    try {
      const { results } = await this.search.search({
        query: question,
        limit: CANDIDATES,
        prefix: folder === undefined ? undefined : `${folder}/`,
        signal: context.signal,
        access: context.access,
      });
      return results;
    } catch (error) {
      context.signal.throwIfAborted();
      this.logger.warn(
        `search for the answer_question prompt failed, rendering without candidates: ${error instanceof Error ? error.message : String(error)}`,
      );
      return [];
    }
  }
}
