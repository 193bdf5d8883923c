"""An OpenAI-compatible embeddings server for the bench: one ONNX text encoder, on loopback.

The bench (bench/scenarios/55-models.mjs) runs the product's production path through it:
our server configured with EMBEDDINGS_PROVIDER=openai and OPENAI_BASE_URL pointing here, as
it would be with TEI, vLLM or Ollama, but with a model whose files we hold, so the vectors
are real and the run needs nothing but PyPI (onnxruntime, tokenizers, numpy; see
make-venv.sh) and the model's files.

    python server.py --model FILE.onnx --tokenizer tokenizer.json --name intfloat/e5-small-v2 \
        --pooling mean [--max-tokens 512] [--threads 1] [--port 0]

It prints `listening PORT` once it serves. Endpoints:

    POST /v1/embeddings  {"input": str | [str, ...], "model"?, "encoding_format"?: "float" |
                         "base64", "dimensions"?}  ->  OpenAI's answer (data, model, usage)
    GET  /v1/models      the one model, under --name
    GET  /health         {"status": "ok"}

What it embeds is the text it is given, nothing added: a query or passage prefix (e5's
`query: `, `passage: `) is the client's to add, as with any OpenAI-compatible server (our
OpenAI embedder adds those of the models it knows). One text per ONNX Runtime run, one run at
a time: the 8-bit models quantize each run's activations by their own range, so a text run
beside others would get a vector that depends on them. A text longer than the window is cut
to it, keeping its closing special token, as the product's own encoder does.
"""

import argparse
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

# A request larger than this is refused: 128 passages of a few KB each are far below it.
MAX_BODY_BYTES = 64 * 1024 * 1024
# Characters of a text tokenized at most: far past any window, so the cut costs nothing.
CHARS_PER_TOKEN_BOUND = 12


def parse_args():
    parser = argparse.ArgumentParser(description="OpenAI-compatible embeddings on loopback")
    parser.add_argument("--model", required=True, help="the ONNX file of a text encoder")
    parser.add_argument("--tokenizer", required=True, help="its tokenizer.json")
    parser.add_argument("--name", required=True, help="the model's name in requests and answers")
    parser.add_argument("--pooling", choices=["cls", "mean"], required=True)
    parser.add_argument("--max-tokens", type=int, default=512, help="the model's window")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime's intra-op threads")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    return parser.parse_args()


class Encoder:
    """The model: tokenizer, session, pooling, L2 normalisation; one text per run."""

    def __init__(self, args):
        self.tokenizer = Tokenizer.from_file(args.tokenizer)
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            args.model, options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self.inputs
        if missing:
            raise SystemExit(f"{args.model} is not a text encoder: no input {sorted(missing)}")
        outputs = [o.name for o in self.session.get_outputs()]
        self.output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        self.pooling = args.pooling
        self.max_tokens = args.max_tokens
        self.lock = threading.Lock()
        self.dimensions = len(self.embed("check")[0])

    def embed(self, text):
        """The unit vector of `text` (float32) and the number of tokens it was given."""
        ids = self.tokenizer.encode(text[: self.max_tokens * CHARS_PER_TOKEN_BOUND]).ids
        if len(ids) > self.max_tokens:
            ids = ids[: self.max_tokens - 1] + ids[-1:]
        input_ids = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        with self.lock:
            states = self.session.run([self.output], feeds)[0][0]
        if states.ndim == 1:  # an export that pools inside the graph
            vector = states
        elif self.pooling == "cls":
            vector = states[0]
        else:  # every token is attended: one text, no padding
            vector = states.mean(axis=0)
        norm = np.linalg.norm(vector)
        return (vector / norm if norm > 0 else vector).astype("<f4"), len(ids)


class ClientError(Exception):
    """A request the client must change: answered 400 in OpenAI's error shape."""

    def __init__(self, message, param=None):
        super().__init__(message)
        self.param = param


def read_inputs(request, encoder):
    """The texts of an embeddings request, checked as OpenAI checks them."""
    if not isinstance(request, dict):
        raise ClientError("the body must be a JSON object")
    texts = request.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ClientError("'input' must be a string or a non-empty array of strings", "input")
    encoding = request.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise ClientError("'encoding_format' must be 'float' or 'base64'", "encoding_format")
    dimensions = request.get("dimensions")
    if dimensions is not None and dimensions != encoder.dimensions:
        raise ClientError(
            f"this model gives {encoder.dimensions} dimensions; 'dimensions' cannot change it",
            "dimensions",
        )
    return texts, encoding


def make_handler(encoder, name):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The head and the body leave in two writes: with Nagle's algorithm the body would wait
        # for the client's delayed ACK of the head, some 40 ms per request on loopback.
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message, kind="invalid_request_error", param=None):
            self.answer(status, {"error": {"message": message, "type": kind, "param": param, "code": None}})

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/health":
                self.answer(200, {"status": "ok"})
            elif path == "/v1/models":
                model = {"id": name, "object": "model", "created": 0, "owned_by": "agent-data-bench"}
                self.answer(200, {"object": "list", "data": [model]})
            else:
                self.error(404, f"no route GET {path}")

        def do_POST(self):
            path = self.path.split("?")[0]
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit() or int(length) > MAX_BODY_BYTES:
                self.close_connection = True
                return self.error(411 if length is None else 413, "a body with Content-Length is required, at most 64 MiB")
            body = self.rfile.read(int(length))
            if path != "/v1/embeddings":
                return self.error(404, f"no route POST {path}")
            try:
                texts, encoding = read_inputs(json.loads(body or b"null"), encoder)
            except json.JSONDecodeError:
                return self.error(400, "the body is not JSON")
            except ClientError as problem:
                return self.error(400, str(problem), param=problem.param)
            data, tokens = [], 0
            for index, text in enumerate(texts):
                vector, count = encoder.embed(text)
                tokens += count
                embedding = (
                    base64.b64encode(vector.tobytes()).decode("ascii")
                    if encoding == "base64"
                    else vector.tolist()
                )
                data.append({"object": "embedding", "index": index, "embedding": embedding})
            usage = {"prompt_tokens": tokens, "total_tokens": tokens}
            self.answer(200, {"object": "list", "data": data, "model": name, "usage": usage})

    return Handler


def main():
    args = parse_args()
    encoder = Encoder(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(encoder, args.name))
    server.daemon_threads = True
    versions = f"onnxruntime {ort.__version__}, numpy {np.__version__}"
    print(f"listening {server.server_address[1]} ({args.name}, {encoder.dimensions} dimensions; {versions})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
