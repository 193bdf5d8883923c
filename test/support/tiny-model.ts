import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Small model files written by hand, for the tests that need an ONNX file of a given shape
 * rather than a real model: an encoder graph of `width` values per token (input ids times the
 * attention mask, repeated `width` times), and a word-level tokenizer of a dozen words.
 * ONNX is protocol buffers; the few fields a graph needs are written here directly (the
 * field numbers are those of onnx.proto).
 */
export function tinyOnnx(options: { width: number; inputs?: readonly string[] }): Buffer {
  const [ids, mask] = options.inputs ?? ['input_ids', 'attention_mask'];
  const int64 = 7;
  const float = 1;
  const tokens = [dim('batch'), dim('sequence')];
  const graph = [
    ...node('Cast', [ids], ['ids'], [intAttribute('to', float)]),
    ...node('Cast', [mask], ['mask'], [intAttribute('to', float)]),
    ...node('Mul', ['ids', 'mask'], ['masked'], []),
    ...node('Unsqueeze', ['masked', 'axes'], ['column'], []),
    ...node('Expand', ['column', 'shape'], ['last_hidden_state'], []),
    ...bytesField(5, int64Tensor('axes', [2])),
    ...bytesField(5, int64Tensor('shape', [1, 1, options.width])),
    ...bytesField(11, valueInfo(ids, int64, tokens)),
    ...bytesField(11, valueInfo(mask, int64, tokens)),
    ...bytesField(12, valueInfo('last_hidden_state', float, [...tokens, varint(1, options.width)])),
    ...stringField(2, 'tiny'),
  ];
  return Buffer.from([
    ...varint(1, 8), // ir_version
    ...stringField(2, 'agent-data tests'),
    ...bytesField(7, graph),
    ...bytesField(8, [...stringField(1, ''), ...varint(2, 13)]), // opset 13
  ]);
}

/** A tokenizer.json that @huggingface/tokenizers reads: whitespace words, [CLS] … [SEP], [UNK] for the rest. */
export function tinyTokenizer(): string {
  const words = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'check', 'hello', 'world', 'the', 'a'];
  const vocab = Object.fromEntries(words.map((word, id) => [word, id]));
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: words.slice(0, 4).map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: null,
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  });
}

/** Writes a tiny model's two files into `dir` under the given names. */
export function writeTinyModel(
  dir: string,
  options: { width: number; inputs?: readonly string[]; model?: string; tokenizer?: string },
): { model: string; tokenizer: string } {
  const model = join(dir, options.model ?? 'model.onnx');
  const tokenizer = join(dir, options.tokenizer ?? 'tokenizer.json');
  writeFileSync(model, tinyOnnx(options));
  writeFileSync(tokenizer, tinyTokenizer());
  return { model, tokenizer };
}

function node(op: string, inputs: string[], outputs: string[], attributes: number[][]): number[] {
  return bytesField(1, [
    ...inputs.flatMap((name) => stringField(1, name)),
    ...outputs.flatMap((name) => stringField(2, name)),
    ...stringField(4, op),
    ...attributes.flatMap((attribute) => bytesField(5, attribute)),
  ]);
}

function intAttribute(name: string, value: number): number[] {
  return [...stringField(1, name), ...varint(3, value), ...varint(20, 2)]; // type INT
}

function int64Tensor(name: string, values: number[]): number[] {
  return [
    ...varint(1, values.length), // dims
    ...varint(2, 7), // INT64
    ...bytesField(
      7,
      values.flatMap((value) => rawVarint(value)),
    ), // int64_data, packed
    ...stringField(8, name),
  ];
}

function valueInfo(name: string, elemType: number, dims: number[][]): number[] {
  const shape = dims.flatMap((d) => bytesField(1, d));
  const tensor = [...varint(1, elemType), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensor))];
}

function dim(name: string): number[] {
  return stringField(2, name);
}

function varint(field: number, value: number): number[] {
  return [...rawVarint(field << 3), ...rawVarint(value)];
}

function bytesField(field: number, bytes: number[]): number[] {
  return [...rawVarint((field << 3) | 2), ...rawVarint(bytes.length), ...bytes];
}

function stringField(field: number, text: string): number[] {
  return bytesField(field, [...Buffer.from(text, 'utf8')]);
}

function rawVarint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}
