import { Injectable } from '@nestjs/common';
import {
  ErrorCode,
  type CompleteRequest,
  type CompleteResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Access } from '../../documents/access';
import { DocumentListingsService } from '../../documents/document-listings.service';
import type { ArgumentCompletion } from '../prompts/prompt';
import { PromptRegistry } from '../prompts/prompt-registry';
import { invalidParams } from '../resources/document-resources';
import { DOCUMENT_TEMPLATE, FOLDER_TEMPLATE } from '../resources/resource-uri';
import { RpcError } from '../rpc-error';

/** Most values one completion answers (the protocol's own cap). */
export const COMPLETION_MAX_VALUES = 100;

/** The argument each resource template takes, and what completes it. */
const TEMPLATE_ARGUMENTS: Readonly<
  Record<string, { name: string; completion: ArgumentCompletion }>
> = {
  [DOCUMENT_TEMPLATE]: { name: 'document_id', completion: 'document_id' },
  [FOLDER_TEMPLATE]: { name: 'folder', completion: 'folder' },
};

/**
 * `completion/complete` (docs/mcp.md): ids and folders from the id index for the resource
 * templates' arguments and the prompts' id and folder arguments, by prefix, at most 100,
 * in byte order. Free-text arguments get no suggestions. The same for every profile:
 * resources and prompts are read-only. A reference or an argument that does not exist is
 * -32602 naming it.
 */
@Injectable()
export class ArgumentCompleter {
  constructor(
    private readonly listings: DocumentListingsService,
    private readonly prompts: PromptRegistry,
  ) {}

  /** Ids and folders holding documents `access` may read, nothing else. */
  async complete(params: CompleteRequest['params'], access: Access): Promise<CompleteResult> {
    const completion = this.completionOf(params.ref, params.argument.name);
    if (completion === undefined) {
      return { completion: { values: [], total: 0, hasMore: false } };
    }
    let found;
    try {
      found =
        completion === 'document_id'
          ? await this.listings.completeIds(params.argument.value, COMPLETION_MAX_VALUES, access)
          : await this.listings.completeFolders(
              params.argument.value,
              COMPLETION_MAX_VALUES,
              access,
            );
    } catch (error) {
      throw invalidParams(error);
    }
    // Only what was read is known: the total is given when the values are all there are.
    return {
      completion: found.more
        ? { values: found.values, hasMore: true }
        : { values: found.values, total: found.values.length, hasMore: false },
    };
  }

  private completionOf(
    ref: CompleteRequest['params']['ref'],
    argument: string,
  ): ArgumentCompletion | undefined {
    if (ref.type === 'ref/prompt') {
      const prompt = this.prompts.find(ref.name, 'ref.name');
      const spec = prompt.arguments.find((candidate) => candidate.name === argument);
      if (spec === undefined) {
        throw unknownArgument(
          `prompt ${prompt.name}`,
          argument,
          prompt.arguments.map((a) => a.name),
        );
      }
      return spec.completion;
    }
    const template = Object.hasOwn(TEMPLATE_ARGUMENTS, ref.uri)
      ? TEMPLATE_ARGUMENTS[ref.uri]
      : undefined;
    if (template === undefined) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Invalid params: ref.uri: ${JSON.stringify(ref.uri.slice(0, 200))} is not a resource template of this server; its templates are ${Object.keys(TEMPLATE_ARGUMENTS).join(' and ')}`,
      );
    }
    if (argument !== template.name) throw unknownArgument(ref.uri, argument, [template.name]);
    return template.completion;
  }
}

function unknownArgument(owner: string, argument: string, known: string[]): RpcError {
  return new RpcError(
    ErrorCode.InvalidParams,
    `Invalid params: argument.name: ${owner} has no argument ${JSON.stringify(argument.slice(0, 100))}; its arguments are ${known.join(', ')}`,
  );
}
