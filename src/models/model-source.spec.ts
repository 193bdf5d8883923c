import { isTokenizerOf, roleOf } from './model-source';

describe('roleOf: which file of a folder or an archive is the model, which the tokenizer', () => {
  it.each([
    ['onnx/model_quantized.onnx', 'model'],
    ['bge-small-en-v1.5-q.onnx', 'model'],
    ['MODEL.ONNX', 'model'],
    ['tokenizer.json', 'tokenizer'],
    ['deep/down/Tokenizer.json', 'tokenizer'],
    ['bge-small-en-v1.5-q-tokenizer.json', 'tokenizer'],
    ['tokenizer_config.json', undefined],
    ['special_tokens_map.json', undefined],
    ['model.onnx_data', undefined],
    ['onnx/', undefined],
    ['mytokenizer.json', undefined],
    ['model.onnx/README', undefined],
  ])('%s: %s', (name, role) => {
    expect(roleOf(name)).toBe(role);
  });
});

describe("isTokenizerOf: tokenizer.json, or the ONNX file's own name with -tokenizer.json", () => {
  it.each([
    ['onnx/model_quantized.onnx', 'tokenizer.json', true],
    ['onnx/model_quantized.onnx', 'deep/Tokenizer.json', true],
    ['onnx/model_quantized.onnx', 'model_quantized-tokenizer.json', true],
    ['e5-small-v2-q.onnx', 'e5-small-v2-q-tokenizer.json', true],
    ['E5-Small-v2-q.ONNX', 'sub/e5-small-v2-q-TOKENIZER.json', true],
    ['e5-small-v2-q.onnx', 'bge-small-en-v1.5-q-tokenizer.json', false],
    ['e5-small-v2-q.onnx', 'e5-small-v2-tokenizer.json', false],
    ['model.onnx', 'other-model-tokenizer.json', false],
    ['model.onnx', 'model-tokenizer.json.bak', false],
  ])('%s with %s: %s', (model, name, expected) => {
    expect(isTokenizerOf(model, name)).toBe(expected);
  });
});
