import { Inject, Injectable } from '@nestjs/common';
import {
  ErrorCode,
  type GetPromptRequest,
  type GetPromptResult,
  type ListPromptsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError, ErrorCode as DomainCode } from '../../common/domain-error';
import { PreSerialized } from '../../transport/framing';
import { RpcError } from '../rpc-error';
import type { McpPrompt, PromptContext } from './prompt';

/** Injection token of the array of every prompt instance (built in McpModule). */
export const MCP_PROMPTS = Symbol('MCP_PROMPTS');

/**
 * The prompts (docs/mcp.md): read-only, so every profile has all of them. `prompts/list` is
 * serialised once at start-up; `prompts/get` checks the arguments against the prompt's
 * declaration before rendering, and answers every refusal with -32602 naming the problem.
 */
@Injectable()
export class PromptRegistry {
  private readonly prompts = new Map<string, McpPrompt>();
  readonly listResult: PreSerialized;

  constructor(@Inject(MCP_PROMPTS) prompts: readonly McpPrompt[]) {
    for (const prompt of prompts) {
      if (this.prompts.has(prompt.name))
        throw new Error(`prompt ${prompt.name} is registered twice`);
      this.prompts.set(prompt.name, prompt);
    }
    this.listResult = PreSerialized.of({
      prompts: prompts.map((prompt) => ({
        name: prompt.name,
        title: prompt.title,
        description: prompt.description,
        arguments: prompt.arguments.map(({ name, description, required }) => ({
          name,
          description,
          required,
        })),
      })),
    } satisfies ListPromptsResult);
  }

  /** The prompt called `name`, or -32602 listing the prompts there are. */
  find(name: string, field = 'name'): McpPrompt {
    const prompt = this.prompts.get(name);
    if (prompt === undefined) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Invalid params: ${field}: unknown prompt ${JSON.stringify(name.slice(0, 100))}; the prompts are ${[...this.prompts.keys()].join(', ')}`,
        { prompt: name.slice(0, 100) },
      );
    }
    return prompt;
  }

  async get(params: GetPromptRequest['params'], context: PromptContext): Promise<GetPromptResult> {
    const prompt = this.find(params.name);
    const args = params.arguments ?? {};
    const declared = prompt.arguments.map((argument) => argument.name);
    const unknown = Object.keys(args).find((name) => !declared.includes(name));
    if (unknown !== undefined) {
      throw invalidArguments(
        `${unknown.slice(0, 100)}: ${prompt.name} takes no such argument; its arguments are ${declared.join(', ')}`,
      );
    }
    const missing = prompt.arguments.find(
      (argument) => argument.required && (args[argument.name] ?? '').trim() === '',
    );
    if (missing !== undefined) throw invalidArguments(`${missing.name}: is required`);
    try {
      return await prompt.render(args, context);
    } catch (error) {
      if (error instanceof DomainError && error.code === DomainCode.INVALID_ARGUMENT) {
        throw invalidArguments(error.message);
      }
      throw error;
    }
  }
}

function invalidArguments(problem: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Invalid params: arguments.${problem}`);
}
