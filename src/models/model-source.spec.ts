import { roleOf } from './model-source';

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
