"""embedding_precision int8: the quantized copy of model.onnx, its identity, its vectors.

File mechanics run on a copy of the tiny random BERT; vector quality, agent-memory search
and a real server run on a copy of the converted all-MiniLM-L6-v2 (never the shared one).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import onnx
import psycopg
import pytest

from proxy.core import config
from proxy.embedding import CachedEmbedder, open_provider
from proxy.embedding import quantize as q
from proxy.embedding.errors import EmbeddingError
from proxy.embedding.onnx_embedder import OnnxEmbedder
from tests import test_semantic_server as semantic_server
from tests.conftest import ROOT, start_server

# The agent tests' hand-made corpus (queries sharing no keyword with their answers) and
# in-process layer: imported, so int8 is held to exactly the expectations fp32 meets.
sys.path.insert(0, str(ROOT / "tests" / "agent"))
from agent_support import open_layer, run, who  # noqa: E402
from test_memory_quality import CORPUS, QUERIES, assert_finds_answers  # noqa: E402

REAL_SENTENCES = [
    *CORPUS,
    *QUERIES,
    "I was charged twice on my credit card, please refund",
    "I cannot log in, my password reset link expired",
    "The weather is sunny in Lisbon",
]


@pytest.fixture
def tiny(tiny_model_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_model_dir, tmp_path / "tiny"))


@pytest.fixture
def quantize_calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = q.quantize

    def counting(model_dir: Path) -> str:
        calls.append(model_dir)
        return real(model_dir)

    monkeypatch.setattr(q, "quantize", counting)
    return calls


@pytest.fixture(scope="module")
def minilm_cache(minilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model cache holding a copy of MiniLM, its int8 copy made once for the module."""
    cache = tmp_path_factory.mktemp("int8-models")
    copy = Path(shutil.copytree(minilm_dir, cache / minilm_dir.name))
    OnnxEmbedder(copy, precision="int8")
    return cache


@pytest.fixture(scope="module")
def minilm_pair(minilm_cache: Path) -> tuple[OnnxEmbedder, OnnxEmbedder]:
    model = minilm_cache / "all-minilm-l6-v2"
    return OnnxEmbedder(model), OnnxEmbedder(model, precision="int8")


# ---- the int8 file ------------------------------------------------------------------------


def test_int8_file_is_made_once_and_reused(tiny: Path, quantize_calls: list[Path]) -> None:
    first = OnnxEmbedder(tiny, precision="int8")
    assert quantize_calls == [tiny]
    made = (tiny / q.INT8_FILE).stat()
    meta = json.loads((tiny / q.INT8_META).read_text())
    assert meta["source_sha256"] == {"model.onnx": q.sha256_file(tiny / "model.onnx")}
    assert meta["int8_sha256"] == q.sha256_file(tiny / q.INT8_FILE)
    # nothing else left behind: no staging dir, no shape-inferred copy of the graph
    assert sorted(p.name for p in tiny.iterdir()) == sorted(
        ["hatiproxy_model.json", "model.onnx", "tokenizer.json", q.INT8_FILE, q.INT8_META]
    )

    again = OnnxEmbedder(tiny, precision="int8")
    assert quantize_calls == [tiny]  # reused, not made again
    now = (tiny / q.INT8_FILE).stat()
    assert (now.st_ino, now.st_mtime_ns) == (made.st_ino, made.st_mtime_ns)
    assert again.model_id == first.model_id
    assert np.array_equal(again.embed("the cat sat"), first.embed("the cat sat"))


def test_changed_model_onnx_is_quantized_again(tiny: Path, quantize_calls: list[Path]) -> None:
    OnnxEmbedder(tiny, precision="int8")
    old_meta = json.loads((tiny / q.INT8_META).read_text())
    graph = onnx.load(str(tiny / "model.onnx"))
    graph.doc_string = "re-exported"  # same weights, other bytes: another model file
    onnx.save(graph, str(tiny / "model.onnx"))

    OnnxEmbedder(tiny, precision="int8")
    assert quantize_calls == [tiny, tiny]
    meta = json.loads((tiny / q.INT8_META).read_text())
    assert meta["source_sha256"]["model.onnx"] == q.sha256_file(tiny / "model.onnx")
    assert meta["source_sha256"] != old_meta["source_sha256"]
    OnnxEmbedder(tiny, precision="int8")
    assert len(quantize_calls) == 2


@pytest.mark.parametrize("damage", ["no record", "bad record", "other file", "no int8 file"])
def test_a_missing_or_mismatched_record_is_made_again(
    tiny: Path, quantize_calls: list[Path], damage: str
) -> None:
    OnnxEmbedder(tiny, precision="int8")
    if damage == "no record":
        (tiny / q.INT8_META).unlink()
    elif damage == "bad record":
        (tiny / q.INT8_META).write_text("{not json")
    elif damage == "other file":
        (tiny / q.INT8_FILE).write_bytes(b"not the quantized graph")
    else:
        (tiny / q.INT8_FILE).unlink()
    emb = OnnxEmbedder(tiny, precision="int8")
    assert len(quantize_calls) == 2
    assert emb.embed("the cat sat").shape == (32,)


def test_a_failed_quantization_leaves_the_previous_pair(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    OnnxEmbedder(tiny, precision="int8")
    before = {f: (tiny / f).read_bytes() for f in (q.INT8_FILE, q.INT8_META)}
    (tiny / q.INT8_META).unlink()  # force a new quantization, which then crashes midway

    def crash(src: Path, dst: Path) -> None:
        dst.write_bytes(b"half a graph")
        raise EmbeddingError("quantizing model.onnx to int8 failed: disk full")

    monkeypatch.setattr(q, "_run_quantizer", crash)
    with pytest.raises(EmbeddingError, match="disk full"):
        OnnxEmbedder(tiny, precision="int8")
    assert (tiny / q.INT8_FILE).read_bytes() == before[q.INT8_FILE]  # untouched
    assert not (tiny / q.INT8_META).exists()  # so the next start quantizes again
    assert not [p for p in tiny.iterdir() if p.name.startswith(".")]  # staging removed


def test_stale_staging_dirs_are_removed(tiny: Path) -> None:
    stale = tiny / ".int8.crashed"
    stale.mkdir()
    (stale / "model.int8.onnx").write_bytes(b"x")
    os.utime(stale, (1_000_000, 1_000_000))
    fresh = tiny / ".int8.other-process"
    fresh.mkdir()  # another process quantizing right now: left alone
    OnnxEmbedder(tiny, precision="int8")
    assert not stale.exists() and fresh.exists()


def test_unwritable_model_dir_names_the_problem(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**kw: object) -> str:  # what a read-only directory does (root ignores modes)
        raise PermissionError(13, "Permission denied", str(kw.get("dir")))

    monkeypatch.setattr(q.tempfile, "mkdtemp", refuse)
    with pytest.raises(EmbeddingError, match="cannot write the int8 model .*use .*fp32"):
        OnnxEmbedder(tiny, precision="int8")


# ---- identity ----------------------------------------------------------------------------


def test_model_id_and_name_differ_by_precision(tiny: Path) -> None:
    fp32, int8 = OnnxEmbedder(tiny), OnnxEmbedder(tiny, precision="int8")
    assert fp32.model_name == "tiny" and int8.model_name == "tiny+int8"
    assert fp32.model_id.startswith("tiny@") and int8.model_id.startswith("tiny+int8@")
    assert int8.model_id != fp32.model_id
    assert "fp32" in fp32.describe() and "int8" not in fp32.describe()
    assert int8.describe().startswith("tiny+int8 (32 dims") and "int8 weights" in int8.describe()


def test_the_cache_never_crosses_precisions(tiny: Path) -> None:
    fp32, int8 = OnnxEmbedder(tiny), OnnxEmbedder(tiny, precision="int8")
    text = "billing dispute refund"
    assert not np.array_equal(fp32.embed(text), int8.embed(text))
    con = duckdb.connect(":memory:")
    a = CachedEmbedder(fp32, con.cursor())
    assert np.array_equal(a.embed(text), fp32.embed(text))
    a.close()  # written to the shared table
    b = CachedEmbedder(int8, con.cursor())
    assert np.array_equal(b.embed(text), int8.embed(text))
    assert b.misses == 1
    b.close()


def test_open_provider_reads_the_precision(minilm_cache: Path, monkeypatch) -> None:
    monkeypatch.setenv("HATIDATA_EMBEDDING_PRECISION", "int8")
    p = open_provider(minilm_cache)
    assert p.model_name == "all-minilm-l6-v2+int8"
    monkeypatch.setenv("HATIDATA_EMBEDDING_PRECISION", "fp16")
    with pytest.raises(EmbeddingError, match="'fp32' or 'int8', not 'fp16'"):
        open_provider(minilm_cache)
    monkeypatch.delenv("HATIDATA_EMBEDDING_PRECISION")
    assert open_provider(minilm_cache).model_name == "all-minilm-l6-v2"


# ---- vectors -----------------------------------------------------------------------------


def test_int8_vectors_are_close_to_fp32_and_unit(minilm_pair) -> None:
    fp32, int8 = minilm_pair
    a, b = fp32.embed_batch(REAL_SENTENCES), int8.embed_batch(REAL_SENTENCES)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    cos = np.sum(a * b, axis=1)
    assert cos.min() >= 0.97, sorted(zip(cos.tolist(), REAL_SENTENCES, strict=True))[:3]
    # one text per forward pass: a vector never depends on the texts batched with it
    alone = np.stack([int8.embed(t) for t in REAL_SENTENCES[:8]])
    assert np.array_equal(alone, b[:8])


def test_int8_ranks_related_texts_first(minilm_pair) -> None:
    # tests/embedding/test_embedders.py::test_minilm_ranks_related_texts_first, with int8
    _, emb = minilm_pair
    docs = [
        "I was charged twice on my credit card, please refund",
        "I cannot log in, my password reset link expired",
        "The weather is sunny in Lisbon",
    ]
    scores = emb.embed_batch(docs) @ emb.embed("billing dispute", mode="query")
    assert int(np.argmax(scores)) == 0


def test_int8_memory_search_finds_answers_without_shared_keywords(
    tmp_path: Path, minilm_cache: Path
) -> None:
    # tests/agent/test_memory_quality.py with embedding_precision int8: same bar
    async def go() -> None:
        async with open_layer(
            tmp_path, provider="onnx", model_dir=minilm_cache, embedding_precision="int8"
        ) as layer:
            assert layer.semantic.model_name == "all-minilm-l6-v2+int8"
            stats = await assert_finds_answers(layer)
            assert [m["model"] for m in stats["models"]] == ["all-minilm-l6-v2+int8"]

    run(go())


async def _embedded(layer, agent, n: int, model: str) -> dict:
    """Memory stats once all n memories carry vectors of `model` (background embedding)."""
    for _ in range(600):
        s = (await layer.call("memory_embedding_stats", agent))[0]
        if s["total_embedded"] == n and [m["model"] for m in s["models"]] == [model]:
            return s
        await asyncio.sleep(0.05)
    return s


def test_switching_precision_re_embeds_memories_like_a_model_switch(
    tmp_path: Path, minilm_cache: Path
) -> None:
    db = str(tmp_path / "mem.duckdb")
    texts = CORPUS[:3]

    async def phase(precision: str, store: bool) -> dict:
        model = "all-minilm-l6-v2" + ("+int8" if precision == "int8" else "")
        async with open_layer(
            tmp_path,
            provider="onnx",
            model_dir=minilm_cache,
            database=db,
            embedding_precision=precision,
        ) as layer:
            a = who("switcher")
            if store:
                for text in texts:
                    await layer.call("store_memory", a, [text])
            s = await _embedded(layer, a, len(texts), model)
            hits = await layer.call("search_memory", a, ["pet animal at work"], top_k=1)
            assert hits[0]["content"] == CORPUS[2] and hits[0]["score_kind"] == "hybrid"
            return s

    before = run(phase("fp32", store=True))
    assert [m["model"] for m in before["models"]] == ["all-minilm-l6-v2"]
    after = run(phase("int8", store=False))  # stored fp32 vectors are embedded again
    assert after["current_model"] == "all-minilm-l6-v2+int8"
    assert [(m["model"], m["count"]) for m in after["models"]] == [
        ("all-minilm-l6-v2+int8", len(texts))
    ]
    back = run(phase("fp32", store=False))  # and back again, like any model switch
    assert [m["model"] for m in back["models"]] == ["all-minilm-l6-v2"]


# ---- the setting and the server ----------------------------------------------------------


def test_setting_parses_from_env_flag_and_file(tmp_path: Path) -> None:
    assert config.load(None, {}).embedding_precision == "fp32"
    assert config.load(None, {"HATIDATA_EMBEDDING_PRECISION": "INT8"}).embedding_precision == (
        "int8"
    )
    toml = tmp_path / "c.toml"
    toml.write_text('embedding_precision = "int8"\n')
    assert config.load(None, {"HATIDATA_CONFIG": str(toml)}).embedding_precision == "int8"
    toml.write_text('embedding_precision = "int4"\n')
    with pytest.raises(ValueError, match="embedding_precision must be fp32 or int8, not 'int4'"):
        config.load(None, {"HATIDATA_CONFIG": str(toml)})


@pytest.mark.parametrize("how", ["flag", "env"])
def test_bad_precision_stops_the_server_at_start(tmp_path: Path, how: str) -> None:
    args = ["--embedding-precision", "fp16"] if how == "flag" else []
    env = {**os.environ, "HATIDATA_EMBEDDING_PRECISION": "fp16" if how == "env" else "fp32"}
    proc = subprocess.run(
        [sys.executable, "-m", "proxy", "serve", "--data-dir", str(tmp_path), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "hatiproxy: embedding_precision must be fp32 or int8, not 'fp16' "
        "(--embedding-precision / HATIDATA_EMBEDDING_PRECISION)"
    ) in proc.stderr


def test_server_with_int8_serves_semantic_sql(tmp_path: Path, minilm_cache: Path) -> None:
    srv = start_server(
        tmp_path,
        "--model-dir",
        str(minilm_cache),
        env={"HATIDATA_EMBEDDING_PRECISION": "int8"},
    )
    try:
        # tests/test_semantic_server.py's search-quality checks, against this server
        semantic_server.test_semantic_rank_orders_by_meaning(srv)
        semantic_server.test_embed_column_index_and_background_fill(srv)
        with psycopg.connect(srv.dsn, autocommit=True) as c:
            assert c.execute("SELECT count(*) FROM kb").fetchone() == (5,)
    finally:
        srv.stop()
    assert "embedding model: all-minilm-l6-v2+int8 (384 dims, mean pooling" in srv.log()
    assert "int8 weights (model.int8.onnx)" in srv.log()
    assert "quantizing" not in srv.log()  # the module's int8 copy was reused
