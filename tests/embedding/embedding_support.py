"""Helpers for the embedding tests: a tiny random BERT checkpoint and a file-server record.

A uniquely named module (not conftest) so `from embedding_support import ...` cannot pick
up another directory's conftest when the whole suite runs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from proxy.embedding.safetensors_io import write_safetensors

FIXTURES = Path(__file__).parent / "fixtures"
WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "dog",
    "ran",
    "fast",
    "billing",
    "dispute",
    "refund",
    "login",
    "password",
    "reset",
    "account",
    "invoice",
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    ".",
    ",",
    "!",
    "?",
]


def make_tokenizer(path: Path) -> Tokenizer:
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    vocab.update({f"##{w}": len(vocab) + i for i, w in enumerate("abcdefghijklmnopqrstuvwxyz")})
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.save(str(path))
    return tok


TINY_CONFIG = {
    "model_type": "bert",
    "hidden_size": 32,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
    "pad_token_id": 0,
}


def tiny_weights(
    config: dict, vocab_size: int, seed: int = 0, prefix: str = "", token_types: bool = True
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, inter = config["hidden_size"], config["intermediate_size"]

    def rand(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": rand(vocab_size, h),
        "embeddings.position_embeddings.weight": rand(config["max_position_embeddings"], h),
        "embeddings.LayerNorm.weight": 1 + rand(h, scale=0.05),
        "embeddings.LayerNorm.bias": rand(h, scale=0.05),
        "pooler.dense.weight": rand(h, h),
        "pooler.dense.bias": rand(h),
    }
    if token_types:
        w["embeddings.token_type_embeddings.weight"] = rand(config["type_vocab_size"], h)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for name, (o, n) in {
            "attention.self.query": (h, h),
            "attention.self.key": (h, h),
            "attention.self.value": (h, h),
            "attention.output.dense": (h, h),
            "intermediate.dense": (inter, h),
            "output.dense": (h, inter),
        }.items():
            w[f"{p}.{name}.weight"] = rand(o, n)
            w[f"{p}.{name}.bias"] = rand(o, scale=0.05)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{ln}.weight"] = 1 + rand(h, scale=0.05)
            w[f"{p}.{ln}.bias"] = rand(h, scale=0.05)
    return {prefix + k: v for k, v in w.items()}


def make_tiny_checkpoint(
    root: Path,
    *,
    pooling: str | None = "mean",
    seed: int = 0,
    prefix: str = "",
    config: dict | None = None,
    token_types: bool = True,
) -> Path:
    """A random 2-layer BERT as safetensors + config.json + tokenizer.json (+ ST pooling)."""
    root.mkdir(parents=True, exist_ok=True)
    tok = make_tokenizer(root / "tokenizer.json")
    cfg = dict(config or TINY_CONFIG)
    cfg["vocab_size"] = tok.get_vocab_size()
    (root / "config.json").write_text(json.dumps(cfg))
    write_safetensors(
        root / "model.safetensors", tiny_weights(cfg, cfg["vocab_size"], seed, prefix, token_types)
    )
    if pooling:
        (root / "1_Pooling").mkdir(exist_ok=True)
        (root / "1_Pooling" / "config.json").write_text(
            json.dumps(
                {
                    "word_embedding_dimension": cfg["hidden_size"],
                    "pooling_mode_cls_token": pooling == "cls",
                    "pooling_mode_mean_tokens": pooling == "mean",
                }
            )
        )
        (root / "modules.json").write_text(
            json.dumps(
                [
                    {
                        "idx": 0,
                        "name": "0",
                        "path": "",
                        "type": "sentence_transformers.models.Transformer",
                    },
                    {
                        "idx": 1,
                        "name": "1",
                        "path": "1_Pooling",
                        "type": "sentence_transformers.models.Pooling",
                    },
                    {
                        "idx": 2,
                        "name": "2",
                        "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize",
                    },
                ]
            )
        )
        (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 16}))
    return root


@dataclass
class FileServer:
    """Serves `files` (URL path -> bytes) with Range support; `truncate` paths send half."""

    base_url: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    truncate: set[str] = field(default_factory=set)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
