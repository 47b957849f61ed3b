"""The safetensors -> ONNX converter, against sentence-transformers and a numpy BERT."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from embedding_support import TINY_CONFIG, make_tiny_checkpoint, tiny_weights

from proxy.embedding.converter import build_bert_graph, convert_checkpoint
from proxy.embedding.errors import ConversionError
from proxy.embedding.modelconfig import load_model_config, sha256_file
from proxy.embedding.onnx_embedder import OnnxEmbedder
from proxy.embedding.safetensors_io import read_safetensors, write_safetensors


def test_converted_minilm_matches_sentence_transformers(minilm_dir: Path, reference: dict):
    """The acceptance test of issue 4: cosine >= 0.999 for every reference sentence."""
    emb = OnnxEmbedder(minilm_dir)
    assert emb.model_name == "all-minilm-l6-v2" and emb.dimensions == 384
    vecs = emb.embed_batch(reference["sentences"])
    ref = np.asarray(reference["vectors"], dtype=np.float64)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    cos = (vecs.astype(np.float64) * ref).sum(axis=1)
    assert len(cos) == 50
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.999, f"sentence {worst} {reference['sentences'][worst][:60]!r}"
    # and far tighter in practice: the graph is exact fp32, not an approximation
    assert cos.min() >= 0.99999
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_reference_has_truncation_and_variety(reference: dict, minilm_dir: Path):
    emb = OnnxEmbedder(minilm_dir)
    lengths = [len(emb.tokenizer.encode(s).ids) for s in reference["sentences"]]
    assert max(lengths) == 256  # some sentences were cut at max_seq_length
    assert sum(n == 256 for n in lengths) >= 3
    assert min(lengths) == 2  # empty-ish texts: just [CLS] [SEP]


def _numpy_bert(cfg: dict, w: dict, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """An independent plain-numpy BERT encoder (float64) to check the graph against."""
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    d = h // heads

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + cfg["layer_norm_eps"]) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T.astype(np.float64) + w[p + ".bias"]

    b, s = ids.shape
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:s]
        + w["embeddings.token_type_embeddings.weight"][np.zeros_like(ids)]
    ).astype(np.float64)
    x = ln(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    erf = np.vectorize(math.erf)
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (
            lin(x, f"{p}.attention.self.{n}").reshape(b, s, heads, d).transpose(0, 2, 1, 3)
            for n in ("query", "key", "value")
        )
        sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        pr = np.exp(sc - sc.max(-1, keepdims=True))
        pr /= pr.sum(-1, keepdims=True)
        ctx = (pr @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
        x = ln(lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        it = lin(x, f"{p}.intermediate.dense")
        it = 0.5 * it * (1 + erf(it / math.sqrt(2)))
        x = ln(lin(it, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    return x


def test_graph_matches_numpy_bert_on_any_config():
    cfg = dict(
        TINY_CONFIG,
        hidden_size=48,
        num_attention_heads=6,
        num_hidden_layers=3,
        intermediate_size=80,
    )
    w = tiny_weights(cfg, vocab_size=50, seed=3)
    model = build_bert_graph(cfg, w)
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50, size=(3, 9)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[1, 5:] = 0  # padded rows must not change the unpadded tokens
    mask[2, 2:] = 0
    got = sess.run(
        None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    )[0]
    want = _numpy_bert(cfg, w, ids, mask.astype(np.float64))
    assert got.shape == (3, 9, 48)
    valid = mask.astype(bool)
    assert np.abs(got[valid] - want[valid]).max() < 1e-4


def test_padding_does_not_change_real_tokens(tiny_model_dir: Path):
    emb = OnnxEmbedder(tiny_model_dir)
    alone = emb.embed("the cat")
    with_long_neighbour = emb.embed_batch(["the cat", "the dog ran fast on the mat " * 3])[0]
    assert np.allclose(alone, with_long_neighbour, atol=1e-5)


def test_prefixed_checkpoint_and_vocab_only_tokenizer(tmp_path: Path):
    """`bert.`-prefixed names (from *ForMaskedLM) and a vocab.txt-only tokenizer convert."""
    src = make_tiny_checkpoint(tmp_path / "src", prefix="bert.", seed=5)
    tok = json.loads((src / "tokenizer.json").read_text())
    vocab = sorted(tok["model"]["vocab"].items(), key=lambda kv: kv[1])
    (src / "vocab.txt").write_text("\n".join(t for t, _ in vocab) + "\n")
    (src / "tokenizer.json").unlink()
    meta = convert_checkpoint(src, tmp_path / "out", name="prefixed")
    assert meta.pooling == "mean" and meta.max_length == 16 and meta.dims == 32
    plain = make_tiny_checkpoint(tmp_path / "plain", seed=5)
    convert_checkpoint(plain, tmp_path / "plain-out", name="plain")
    a = OnnxEmbedder(tmp_path / "out").embed("the cat sat")
    b = OnnxEmbedder(tmp_path / "plain-out").embed("the cat sat")
    assert np.allclose(a, b, atol=1e-6)


def test_converted_dir_layout_and_checksums(tiny_model_dir: Path):
    names = sorted(p.name for p in tiny_model_dir.iterdir())
    assert names == ["hatiproxy_model.json", "model.onnx", "tokenizer.json"]
    cfg = load_model_config(tiny_model_dir)
    assert cfg.files["model.onnx"] == sha256_file(tiny_model_dir / "model.onnx")
    model = onnx.load(str(tiny_model_dir / "model.onnx"))
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in model.graph.output] == ["last_hidden_state"]


def test_no_token_type_embeddings_means_no_token_type_input(tmp_path: Path):
    src = make_tiny_checkpoint(tmp_path / "src", token_types=False)
    convert_checkpoint(src, tmp_path / "out", name="nott")
    emb = OnnxEmbedder(tmp_path / "out")
    assert [i.name for i in emb.session.get_inputs()] == ["input_ids", "attention_mask"]
    assert emb.embed("the cat").shape == (32,)


def test_unknown_pooling_and_bad_checkpoints_are_refused(tmp_path: Path):
    src = make_tiny_checkpoint(tmp_path / "nopool", pooling=None)
    with pytest.raises(ConversionError, match="--pooling"):
        convert_checkpoint(src, tmp_path / "out", name="x")
    assert not (tmp_path / "out").exists()
    meta = convert_checkpoint(src, tmp_path / "out", name="x", pooling="cls")
    assert meta.pooling == "cls" and meta.max_length == 64  # from max_position_embeddings
    with pytest.raises(ConversionError, match="model_type"):
        build_bert_graph(dict(TINY_CONFIG, model_type="gpt2"), {})
    with pytest.raises(ConversionError, match="not a BERT"):
        build_bert_graph(TINY_CONFIG, {"foo.weight": np.zeros(2, np.float32)})


def test_safetensors_roundtrip_and_bf16(tmp_path: Path):
    t = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.arange(4, dtype=np.int64)}
    write_safetensors(tmp_path / "x.safetensors", t)
    back = read_safetensors(tmp_path / "x.safetensors")
    assert np.array_equal(back["a"], t["a"]) and np.array_equal(back["i"], t["i"])
    # hand-made BF16 tensor: the top 16 bits of float32
    vals = np.array([1.5, -2.0, 0.15625], dtype=np.float32)
    raw = (vals.view(np.uint32) >> 16).astype("<u2").tobytes()
    header = json.dumps({"b": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}}).encode()
    (tmp_path / "bf.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + raw)
    assert np.array_equal(read_safetensors(tmp_path / "bf.safetensors")["b"], vals)
    (tmp_path / "bad.safetensors").write_bytes((10**9).to_bytes(8, "little") + b"{}")
    with pytest.raises(ConversionError):
        read_safetensors(tmp_path / "bad.safetensors")
