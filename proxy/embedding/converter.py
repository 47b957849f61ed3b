"""BERT-family safetensors checkpoint -> ONNX encoder graph, with onnx + numpy only (no torch).

The graph has inputs `input_ids`, `attention_mask` and (when the checkpoint has token type
embeddings) `token_type_ids`, all int64 (batch, seq), and one output `last_hidden_state`
(batch, seq, hidden). Pooling and normalisation stay in numpy (OnnxEmbedder) so that
converted and downloaded models go through one code path.

Layer sizes come from config.json, so any BERT checkpoint works (MiniLM, BGE, e5, GTE...).
RoBERTa-style position offsets are handled; other families raise ConversionError.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .errors import ConversionError
from .fsutil import publish_dir, staging_dir
from .modelconfig import (
    MODEL_FILE,
    TOKENIZER_FILE,
    ModelConfig,
    infer_max_length,
    infer_sentence_transformers,
    sha256_file,
)
from .safetensors_io import read_safetensors

log = logging.getLogger("hatiproxy.embedding")

OPSET = 17  # LayerNormalization became a standard op in 17
IR_VERSION = 8  # the IR that goes with opset 17: loadable by every onnxruntime >= 1.14
_SUPPORTED_TYPES = {"bert", "roberta", "xlm-roberta", "camembert"}
_EXTERNAL_DATA_BYTES = 1_800_000_000  # protobuf files cap at 2 GB


class _Graph:
    """Accumulates nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self._n = 0
        self._scalars: set[str] = set()

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def scalar(self, name: str, value: float) -> str:
        """A float32 scalar constant, added on first use only (ORT warns about unused ones)."""
        if name not in self._scalars:
            self._scalars.add(name)
            self.const(name, np.array(value, np.float32))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def _strip_prefix(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Checkpoints saved from *ForMaskedLM etc. prefix the encoder with `bert.`/`roberta.`."""
    anchor = "embeddings.word_embeddings.weight"
    hits = [k for k in weights if k.endswith(anchor)]
    if not hits:
        raise ConversionError(f"no {anchor} in the checkpoint: not a BERT-family encoder")
    prefix = min(hits, key=len)[: -len(anchor)]
    return {k[len(prefix) :]: v for k, v in weights.items() if k.startswith(prefix)}


def _activation(g: _Graph, x: str, act: str) -> str:
    if act == "gelu":  # exact erf form, as torch's nn.GELU(); ORT fuses it into Gelu
        inner = g.op("Erf", [g.op("Div", [x, g.scalar("c_sqrt2", math.sqrt(2.0))])])
        return g.op(
            "Mul", [g.op("Mul", [x, g.op("Add", [inner, "c_one"])]), g.scalar("c_half", 0.5)]
        )
    if act in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", [g.op("Mul", [x, x]), x])
        inner = g.op("Add", [x, g.op("Mul", [cube, g.scalar("c_gelu_k", 0.044715)])])
        t = g.op("Tanh", [g.op("Mul", [inner, g.scalar("c_sqrt_2_pi", math.sqrt(2 / math.pi))])])
        return g.op("Mul", [g.op("Mul", [x, g.op("Add", [t, "c_one"])]), g.scalar("c_half", 0.5)])
    if act == "relu":
        return g.op("Relu", [x])
    raise ConversionError(f"unsupported hidden_act {act!r}")


def build_bert_graph(config: dict[str, Any], weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    model_type = config.get("model_type", "bert")
    if model_type not in _SUPPORTED_TYPES:
        raise ConversionError(f"model_type {model_type!r} is not a supported BERT family")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ConversionError("only absolute position embeddings are supported")
    w = _strip_prefix(weights)
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    if hidden % heads:
        raise ConversionError(f"hidden_size {hidden} is not divisible by {heads} heads")
    head_dim = hidden // heads
    # RoBERTa numbers positions from padding_idx + 1
    pos_offset = int(config.get("pad_token_id", 1)) + 1 if model_type != "bert" else 0

    def get(name: str) -> np.ndarray:
        if name not in w:
            raise ConversionError(f"checkpoint lacks tensor {name}")
        return w[name].astype(np.float32)

    g = _Graph()
    g.scalar("c_one", 1.0)
    g.scalar("c_scale", 1.0 / math.sqrt(head_dim))
    g.scalar("c_neg", -10000.0)  # additive mask for padded keys
    g.const("c_heads_shape", np.array([0, 0, heads, head_dim], np.int64))
    g.const("c_hidden_shape", np.array([0, 0, hidden], np.int64))
    g.const("c_mask_axes", np.array([1, 2], np.int64))
    g.const("c_pos_start", np.array([pos_offset], np.int64))
    g.const("c_axis0", np.array([0], np.int64))

    def linear(x: str, prefix: str) -> str:
        wt = g.const(f"{prefix}.weight_t", get(f"{prefix}.weight").T)  # torch stores (out, in)
        b = g.const(f"{prefix}.bias", get(f"{prefix}.bias"))
        return g.op("Add", [g.op("MatMul", [x, wt]), b])

    def layer_norm(x: str, prefix: str) -> str:
        scale = g.const(f"{prefix}.weight", get(f"{prefix}.weight"))
        bias = g.const(f"{prefix}.bias", get(f"{prefix}.bias"))
        return g.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)

    # embeddings: word + position + token type, then LayerNorm
    word = g.const("embeddings.word_embeddings.weight", get("embeddings.word_embeddings.weight"))
    x = g.op("Gather", [word, "input_ids"], axis=0)
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    pos_table = g.const(
        "embeddings.position_embeddings.weight", get("embeddings.position_embeddings.weight")
    )
    pos_end = g.op("Add", [seq_len, "c_pos_start"])
    positions = g.op("Slice", [pos_table, "c_pos_start", pos_end, "c_axis0"])
    x = g.op("Add", [x, positions])
    has_types = "embeddings.token_type_embeddings.weight" in w
    if has_types:
        types = g.const(
            "embeddings.token_type_embeddings.weight",
            get("embeddings.token_type_embeddings.weight"),
        )
        x = g.op("Add", [x, g.op("Gather", [types, "token_type_ids"], axis=0)])
    x = layer_norm(x, "embeddings.LayerNorm")

    # (batch, seq) 1/0 mask -> (batch, 1, 1, seq) additive 0 / -10000
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", ["c_one", mask]), "c_neg"])
    mask = g.op("Unsqueeze", [mask, "c_mask_axes"])

    for i in range(layers):
        p = f"encoder.layer.{i}"

        def split_heads(t: str, perm: list[int]) -> str:
            return g.op("Transpose", [g.op("Reshape", [t, "c_heads_shape"])], perm=perm)

        q = split_heads(linear(x, f"{p}.attention.self.query"), [0, 2, 1, 3])
        k = split_heads(linear(x, f"{p}.attention.self.key"), [0, 2, 3, 1])
        v = split_heads(linear(x, f"{p}.attention.self.value"), [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), "c_scale"]), mask])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, "c_hidden_shape"])
        attn = linear(ctx, f"{p}.attention.output.dense")
        x = layer_norm(g.op("Add", [attn, x]), f"{p}.attention.output.LayerNorm")
        inter = _activation(
            g, linear(x, f"{p}.intermediate.dense"), str(config.get("hidden_act", "gelu"))
        )
        out = linear(inter, f"{p}.output.dense")
        x = layer_norm(g.op("Add", [out, x]), f"{p}.output.LayerNorm")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if has_types else [])
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in names]
    outputs = [
        helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden]
        )
    ]
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, outputs, initializer=g.inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hatiproxy-converter"
    )
    model.ir_version = IR_VERSION
    return model


def _write_tokenizer(src: Path, dst: Path) -> None:
    """Copy tokenizer.json; build one from a BERT vocab.txt when that is all there is."""
    if (src / TOKENIZER_FILE).exists():
        shutil.copyfile(src / TOKENIZER_FILE, dst / TOKENIZER_FILE)
        return
    if not (src / "vocab.txt").exists():
        raise ConversionError(f"{src}: neither tokenizer.json nor vocab.txt")
    from tokenizers.implementations import BertWordPieceTokenizer

    lower = True
    tok_cfg = src / "tokenizer_config.json"
    if tok_cfg.exists():
        lower = bool(json.loads(tok_cfg.read_text()).get("do_lower_case", True))
    tok = BertWordPieceTokenizer(str(src / "vocab.txt"), lowercase=lower)
    tok.save(str(dst / TOKENIZER_FILE))


def convert_checkpoint(
    src: Path,
    dst: Path,
    *,
    name: str,
    pooling: str | None = None,
    normalize: bool | None = None,
    query_prefix: str | None = None,
    max_length: int | None = None,
    source: str = "",
) -> ModelConfig:
    """Convert `src` (config.json + model.safetensors + tokenizer) into model dir `dst`.

    Written into a temporary sibling directory and renamed, so `dst` is either complete
    or absent. Explicit arguments override what sentence-transformers files say.
    """
    src, dst = Path(src), Path(dst)
    cfg_path, st_path = src / "config.json", src / "model.safetensors"
    if not cfg_path.exists() or not st_path.exists():
        raise ConversionError(f"{src}: need config.json and model.safetensors to convert")
    config = json.loads(cfg_path.read_text(encoding="utf-8"))
    found = infer_sentence_transformers(src)
    pooling = pooling or found.get("pooling")
    if pooling not in ("cls", "mean"):
        raise ConversionError(
            f"{src}: pooling unknown (no sentence-transformers config); pass --pooling cls|mean"
        )
    started = time.monotonic()

    def step(what: str) -> None:  # a first start waits on this: say what it is doing
        log.info("converting %s to ONNX: %s (%.1f s)", name, what, time.monotonic() - started)

    step(f"reading {st_path} ({st_path.stat().st_size / 1e6:.0f} MB)")
    weights = read_safetensors(st_path)
    step(f"building the encoder graph ({config.get('num_hidden_layers', '?')} layers)")
    model = build_bert_graph(config, weights)
    meta = ModelConfig(
        name=name,
        pooling=pooling,  # type: ignore[arg-type]
        normalize=found.get("normalize", True) if normalize is None else normalize,
        max_length=max_length or found.get("max_length") or infer_max_length(src),
        query_prefix=found.get("query_prefix", "") if query_prefix is None else query_prefix,
        dims=int(config["hidden_size"]),
        source=source or f"converted from {src}",
    )
    tmp = staging_dir(dst.parent, dst.name)
    try:
        big = model.ByteSize() > _EXTERNAL_DATA_BYTES
        step(f"writing {MODEL_FILE}")
        onnx.save_model(
            model,
            str(tmp / MODEL_FILE),
            save_as_external_data=big,
            location=MODEL_FILE + ".data" if big else None,
        )
        _write_tokenizer(src, tmp)
        step("recording checksums")
        for f in sorted(tmp.iterdir()):
            meta.files[f.name] = sha256_file(f)
        meta.save(tmp)
        publish_dir(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("converted %s to ONNX in %s (%.1f s)", name, dst, time.monotonic() - started)
    return meta
