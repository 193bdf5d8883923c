import { Tokenizer } from '@huggingface/tokenizers';
import { readFile } from 'node:fs/promises';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { KnownModel } from './known-models';
import { ModelError } from './model-store';

/** Whether a text is a query or a passage: asymmetric models embed them differently. */
export type TextKind = 'query' | 'passage';

/** Characters of a text tokenized at most: far past any window, so the cut costs nothing. */
const CHARS_PER_TOKEN_BOUND = 12;

export interface EncoderOptions {
  /** ONNX Runtime's threads for one run (intra-op). */
  readonly threads: number;
}

/**
 * One embedding model, loaded: a tokenizer (transformers' `tokenizer.json`, read by
 * `@huggingface/tokenizers`) and an ONNX Runtime session. Turns texts into unit vectors the
 * way the model's authors do: the query or passage prefix, the model's window (longer texts
 * cut, their last special token kept), the first token's state or the mean of the attended
 * ones, L2 normalisation.
 *
 * `encode` runs ONNX Runtime, which holds the calling thread for the whole run: call it on a
 * worker thread, never on the event loop that answers requests.
 */
export class OnnxEncoder {
  private constructor(
    readonly model: KnownModel,
    private readonly tokenizer: Tokenizer,
    private readonly session: InferenceSession,
    private readonly ort: typeof import('onnxruntime-node'),
    private readonly output: string,
  ) {}

  /**
   * Loads the model's files from `files`. Rejects with a ModelError when the tokenizer or the
   * ONNX file cannot be read, or the model's inputs and outputs are not those of an encoder
   * giving `model.dimensions` values per token.
   */
  static async open(
    files: { readonly model: string; readonly tokenizer: string },
    model: KnownModel,
    options: EncoderOptions,
  ): Promise<OnnxEncoder> {
    let tokenizer: Tokenizer;
    try {
      const json: unknown = JSON.parse(await readFile(files.tokenizer, 'utf8'));
      tokenizer = new Tokenizer(json as object, {});
      tokenizer.encode('check');
    } catch (error) {
      throw new ModelError(`the tokenizer file cannot be used: ${messageOf(error)}`);
    }
    // Loaded on first use: the command-line tools that never embed do not pay for it.
    const ort = await import('onnxruntime-node');
    let session: InferenceSession;
    try {
      session = await ort.InferenceSession.create(files.model, {
        intraOpNumThreads: options.threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        // Without ONNX Runtime's arena, the memory of a run is given back after it (the arena
        // keeps its largest run's, some 200 MB more per thread here).
        enableCpuMemArena: false,
      });
    } catch (error) {
      throw new ModelError(`the ONNX file cannot be loaded: ${firstLine(messageOf(error))}`);
    }
    const missing = ['input_ids', 'attention_mask'].filter((n) => !session.inputNames.includes(n));
    const unknown = session.inputNames.filter(
      (n) => !['input_ids', 'attention_mask', 'token_type_ids'].includes(n),
    );
    if (missing.length > 0 || unknown.length > 0) {
      await session.release();
      throw new ModelError(
        `the ONNX file is not a text encoder of the expected kind: its inputs are ${session.inputNames.join(', ')} (expected input_ids, attention_mask and optionally token_type_ids)`,
      );
    }
    const output = session.outputNames.includes('last_hidden_state')
      ? 'last_hidden_state'
      : session.outputNames[0];
    const encoder = new OnnxEncoder(model, tokenizer, session, ort, output);
    // One text through it: the output's shape and length are known only by running it.
    try {
      await encoder.encode(['check'], 'passage');
    } catch (error) {
      await session.release();
      throw error instanceof ModelError
        ? error
        : new ModelError(`the ONNX file fails to run: ${firstLine(messageOf(error))}`);
    }
    return encoder;
  }

  /**
   * The same files run as `model` (its prefixes, pooling and window), sharing this encoder's
   * session: to tell which known model files are (model-check.ts). Closing this encoder
   * closes both.
   */
  as(model: KnownModel): OnnxEncoder {
    if (model === this.model) return this;
    return new OnnxEncoder(model, this.tokenizer, this.session, this.ort, this.output);
  }

  /** Input names of the session, for `models list`. */
  get inputs(): readonly string[] {
    return this.session.inputNames;
  }

  /**
   * The unit vectors of `texts`, back to back (`texts.length × dimensions` floats), in the
   * order given. One text per run: the 8-bit models quantize each run's activations by their
   * own range, so a text run beside others would get a vector that depends on them (cosine
   * down to 0.97 against the same text alone), and on a CPU thread one text of a few hundred
   * tokens already fills the vector units (a run of eight was no faster here).
   */
  async encode(texts: readonly string[], kind: TextKind): Promise<Float32Array> {
    const dimensions = this.model.dimensions;
    const out = new Float32Array(texts.length * dimensions);
    const prefix = kind === 'query' ? this.model.queryPrefix : this.model.passagePrefix;
    for (const [i, text] of texts.entries()) {
      out.set(await this.run(this.tokens(prefix + text)), i * dimensions);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  /** The text's token ids, special tokens included, cut to the model's window. */
  private tokens(text: string): number[] {
    const max = this.model.maxTokens;
    const ids = this.tokenizer.encode(text.slice(0, max * CHARS_PER_TOKEN_BOUND)).ids;
    if (ids.length <= max) return ids;
    // Keep the closing special token ([SEP], </s>) the model saw every text end with.
    return [...ids.slice(0, max - 1), ids[ids.length - 1]];
  }

  /** The pooled, normalised vector of a text already tokenized. */
  private async run(tokens: readonly number[]): Promise<Float32Array> {
    const { Tensor } = this.ort;
    const length = tokens.length;
    const ids = BigInt64Array.from(tokens, (id) => BigInt(id));
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [1, length]),
      attention_mask: new Tensor('int64', new BigInt64Array(length).fill(1n), [1, length]),
    };
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new Tensor('int64', new BigInt64Array(length), [1, length]);
    }
    const results = await this.session.run(feeds);
    try {
      const states = results[this.output];
      const dims = states.dims;
      const data = states.data as Float32Array;
      const width = dims[dims.length - 1];
      if (width !== this.model.dimensions) {
        throw new ModelError(
          `the ONNX file gives vectors of ${width} values, ${this.model.name} has ${this.model.dimensions}: these are not its files`,
        );
      }
      const vector = new Float32Array(width);
      if (dims.length === 2 || this.model.pooling === 'cls') {
        // An export that pools inside the graph gives one vector; otherwise the first token's.
        vector.set(data.subarray(0, width));
      } else {
        for (let j = 0; j < length; j++) {
          for (let d = 0; d < width; d++) vector[d] += data[j * width + d];
        }
        for (let d = 0; d < width; d++) vector[d] /= length;
      }
      normalise(vector);
      return vector;
    } finally {
      for (const tensor of Object.values(results)) tensor.dispose?.();
    }
  }
}

function normalise(vector: Float32Array): void {
  let sum = 0;
  for (let d = 0; d < vector.length; d++) sum += vector[d] * vector[d];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let d = 0; d < vector.length; d++) vector[d] /= norm;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(text: string): string {
  return text.split('\n')[0].slice(0, 300);
}
