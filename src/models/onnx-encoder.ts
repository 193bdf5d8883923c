import { Tokenizer } from '@huggingface/tokenizers';
import { readFile } from 'node:fs/promises';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { KnownModel } from './known-models';
import { ModelError } from './model-store';

/** Whether a text is a query or a passage: asymmetric models embed them differently. */
export type TextKind = 'query' | 'passage';

/**
 * Tokens of one `run` at most (padded length × texts): four passages of 512 tokens. The
 * attention scores of a run take texts × heads × length² floats (50 MB here, 400 MB for 32
 * such passages), and a CPU gains little from larger runs: the matrices of one 512-token
 * text already fill its vector units.
 */
const TOKENS_PER_RUN = 2048;
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

  /** Input names of the session, for `models list`. */
  get inputs(): readonly string[] {
    return this.session.inputNames;
  }

  /**
   * The unit vectors of `texts`, back to back (`texts.length × dimensions` floats), in the
   * order given. Texts of similar length are run together (less padding), at most
   * {@link TOKENS_PER_RUN} tokens per run.
   */
  async encode(texts: readonly string[], kind: TextKind): Promise<Float32Array> {
    const dimensions = this.model.dimensions;
    const out = new Float32Array(texts.length * dimensions);
    const prefix = kind === 'query' ? this.model.queryPrefix : this.model.passagePrefix;
    const encoded = texts.map((text) => this.tokens(prefix + text));
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].length - encoded[b].length);
    let at = 0;
    while (at < order.length) {
      // The longest of a run is its last (sorted by length): as many as fit under the budget.
      let end = at + 1;
      while (end < order.length && encoded[order[end]].length * (end - at + 1) <= TOKENS_PER_RUN) {
        end++;
      }
      const batch = order.slice(at, end);
      const vectors = await this.run(batch.map((i) => encoded[i]));
      batch.forEach((i, k) =>
        out.set(vectors.subarray(k * dimensions, (k + 1) * dimensions), i * dimensions),
      );
      at = end;
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

  /** Pooled, normalised vectors of texts already tokenized, back to back. */
  private async run(batch: readonly number[][]): Promise<Float32Array> {
    const { Tensor } = this.ort;
    const rows = batch.length;
    const length = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(rows * length);
    const mask = new BigInt64Array(rows * length);
    batch.forEach((tokens, r) => {
      for (let j = 0; j < tokens.length; j++) {
        ids[r * length + j] = BigInt(tokens[j]);
        mask[r * length + j] = 1n;
      }
    });
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [rows, length]),
      attention_mask: new Tensor('int64', mask, [rows, length]),
    };
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new Tensor('int64', new BigInt64Array(rows * length), [rows, length]);
    }
    const results = await this.session.run(feeds);
    const states = results[this.output];
    const dims = states.dims;
    const data = states.data as Float32Array;
    const width = dims[dims.length - 1];
    if (width !== this.model.dimensions) {
      throw new ModelError(
        `the ONNX file gives vectors of ${width} values, ${this.model.name} has ${this.model.dimensions}: these are not its files`,
      );
    }
    const vectors = new Float32Array(rows * width);
    if (dims.length === 2) {
      // Already one vector per text (an export that pools inside the graph).
      vectors.set(data.subarray(0, rows * width));
    } else {
      for (let r = 0; r < rows; r++) {
        const vector = vectors.subarray(r * width, (r + 1) * width);
        const base = r * length * width;
        if (this.model.pooling === 'cls') {
          vector.set(data.subarray(base, base + width));
        } else {
          const count = batch[r].length;
          for (let j = 0; j < count; j++) {
            const row = base + j * width;
            for (let d = 0; d < width; d++) vector[d] += data[row + d];
          }
          for (let d = 0; d < width; d++) vector[d] /= count;
        }
      }
    }
    for (const tensor of Object.values(results)) tensor.dispose?.();
    for (let r = 0; r < rows; r++) normalise(vectors.subarray(r * width, (r + 1) * width));
    return vectors;
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
