/**
 * The embedding models this server knows how to run and how to fetch, each described once:
 * where its files are published, how a text becomes its vector (pooling, normalisation,
 * the prefixes its authors trained queries and passages with, the window) and what comes
 * out. The local ONNX embedder, `agent-data models` and the OpenAI-compatible embedder
 * (for a server running one of these models) all read this table.
 */
export interface KnownModel {
  /** The name users give (`EMBEDDINGS_MODEL`, `agent-data models pull NAME`); its folder. */
  readonly name: string;
  /** Other names it goes by (its Hugging Face ids), matched without regard to case. */
  readonly aliases: readonly string[];
  /**
   * Where `models pull` fetches it: a Hugging Face repository laid out as transformers.js
   * expects (`onnx/model_quantized.onnx`, 8-bit weights, beside `tokenizer.json`).
   */
  readonly hub: {
    readonly repo: string;
    readonly revision: string;
    readonly model: string;
    readonly tokenizer: string;
  };
  /** Length of its vectors. */
  readonly dimensions: number;
  /** How the token states become one vector: the first token's (`cls`) or their mean. */
  readonly pooling: 'cls' | 'mean';
  /** Prepended to a query before it is embedded (asymmetric models are trained so). */
  readonly queryPrefix: string;
  /** Prepended to a passage before it is embedded. */
  readonly passagePrefix: string;
  /** Tokens the model reads, special tokens included; the rest of a longer text is cut. */
  readonly maxTokens: number;
  readonly licence: string;
  /** What it was trained on, for `models list` and the docs. */
  readonly languages: 'English' | 'multilingual';
  /**
   * The first values of the model's vector of CHECK_TEXT embedded as a passage, taken from its
   * original (32-bit) files: `models add` and `models pull` embed the same text with the files
   * they are given and install them only if they match (model-check.ts), since another model
   * of the same dimension loads and runs just as well. Absent for a model whose files were not
   * at hand to take it from: its files are then checked by the length of their vectors only.
   */
  readonly fingerprint?: readonly number[];
}

/**
 * The text every fingerprint is the vector of: short, so that checking costs one run of a
 * few tokens, and plain English, which every known model reads.
 */
export const CHECK_TEXT = 'A knowledge base keeps markdown documents for agents.';

/** The instruction BGE and Arctic models put before a query (their model cards). */
const RETRIEVAL_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

export const KNOWN_MODELS: readonly KnownModel[] = [
  {
    name: 'bge-small-en-v1.5',
    aliases: ['BAAI/bge-small-en-v1.5', 'Xenova/bge-small-en-v1.5'],
    hub: {
      repo: 'Xenova/bge-small-en-v1.5',
      revision: 'main',
      model: 'onnx/model_quantized.onnx',
      tokenizer: 'tokenizer.json',
    },
    dimensions: 384,
    pooling: 'cls',
    queryPrefix: RETRIEVAL_INSTRUCTION,
    passagePrefix: '',
    maxTokens: 512,
    licence: 'MIT',
    languages: 'English',
    fingerprint: [-0.0258, 0.0332, -0.0307, -0.0199, -0.0113, -0.0402, 0.0173, 0.0141],
  },
  {
    name: 'all-MiniLM-L6-v2',
    aliases: ['sentence-transformers/all-MiniLM-L6-v2', 'Xenova/all-MiniLM-L6-v2'],
    hub: {
      repo: 'Xenova/all-MiniLM-L6-v2',
      revision: 'main',
      model: 'onnx/model_quantized.onnx',
      tokenizer: 'tokenizer.json',
    },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: '',
    passagePrefix: '',
    // Trained on 128-token texts; sentence-transformers reads 256.
    maxTokens: 256,
    licence: 'Apache-2.0',
    languages: 'English',
    fingerprint: [-0.0313, 0.0503, -0.0589, 0.0086, 0.0358, 0.0402, 0.0077, 0.026],
  },
  {
    name: 'e5-small-v2',
    aliases: ['intfloat/e5-small-v2', 'Xenova/e5-small-v2'],
    hub: {
      repo: 'Xenova/e5-small-v2',
      revision: 'main',
      model: 'onnx/model_quantized.onnx',
      tokenizer: 'tokenizer.json',
    },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    maxTokens: 512,
    licence: 'MIT',
    languages: 'English',
    fingerprint: [-0.0626, 0.0657, -0.012, 0.0097, -0.0023, 0.0516, 0.0349, -0.0025],
  },
  {
    name: 'multilingual-e5-small',
    aliases: ['intfloat/multilingual-e5-small', 'Xenova/multilingual-e5-small'],
    hub: {
      repo: 'Xenova/multilingual-e5-small',
      revision: 'main',
      model: 'onnx/model_quantized.onnx',
      tokenizer: 'tokenizer.json',
    },
    dimensions: 384,
    pooling: 'mean',
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    maxTokens: 512,
    licence: 'MIT',
    languages: 'multilingual',
  },
  {
    name: 'snowflake-arctic-embed-s',
    aliases: ['Snowflake/snowflake-arctic-embed-s'],
    hub: {
      repo: 'Snowflake/snowflake-arctic-embed-s',
      revision: 'main',
      model: 'onnx/model_quantized.onnx',
      tokenizer: 'tokenizer.json',
    },
    dimensions: 384,
    pooling: 'cls',
    queryPrefix: RETRIEVAL_INSTRUCTION,
    passagePrefix: '',
    maxTokens: 512,
    licence: 'Apache-2.0',
    languages: 'English',
  },
];

/**
 * The cl100k tokens a chunk for `model` may hold: 70 % of its window, since the models'
 * WordPiece and SentencePiece vocabularies cut English and code into some 1.2–1.35 times as
 * many tokens as cl100k does, so a chunk of this size still fits whole.
 */
export function chunkTokensFor(model: KnownModel): number {
  return Math.floor(model.maxTokens * 0.7);
}

/** The model named `name` (its name or an alias, any case), or `undefined`. */
export function knownModel(name: string): KnownModel | undefined {
  const wanted = name.trim().toLowerCase();
  return KNOWN_MODELS.find(
    (model) =>
      model.name.toLowerCase() === wanted ||
      model.aliases.some((alias) => alias.toLowerCase() === wanted),
  );
}

/** The names users may give, for messages that list them. */
export function knownModelNames(): string {
  return KNOWN_MODELS.map((model) => model.name).join(', ');
}
