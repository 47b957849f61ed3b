"""How a model directory is described: `hatiproxy_model.json`, or sentence-transformers files.

A model directory holds `model.onnx` + `tokenizer.json` and the facts the embedder needs
but the ONNX graph does not carry: pooling, normalisation, max length, query prefix.
Our registry/importer/converter always writes `hatiproxy_model.json`; a plain
sentence-transformers export (`modules.json`, `1_Pooling/config.json`,
`sentence_bert_config.json`) is understood too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import EmbeddingError

METADATA_FILE = "hatiproxy_model.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
Pooling = Literal["cls", "mean"]


@dataclass
class ModelConfig:
    name: str
    pooling: Pooling
    normalize: bool = True
    max_length: int = 512
    query_prefix: str = ""
    dims: int | None = None
    source: str = ""
    # relative path -> sha256 of every file the model needs; `verify` recomputes them
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        cfg = cls(**known)
        if cfg.pooling not in ("cls", "mean"):
            raise EmbeddingError(f"unsupported pooling {cfg.pooling!r} (cls or mean)")
        return cfg

    def save(self, model_dir: Path) -> None:
        tmp = model_dir / (METADATA_FILE + ".tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        tmp.replace(model_dir / METADATA_FILE)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def infer_sentence_transformers(model_dir: Path) -> dict[str, Any]:
    """Pooling/normalize/max_length/query prefix from sentence-transformers files, if any."""
    out: dict[str, Any] = {}
    modules_path = model_dir / "modules.json"
    pooling_dir = model_dir / "1_Pooling"
    if modules_path.exists():
        modules = _read_json(modules_path)
        types = [str(m.get("type", "")) for m in modules]
        out["normalize"] = any(t.endswith("Normalize") for t in types)
        for m in modules:
            if str(m.get("type", "")).endswith("Pooling"):
                pooling_dir = model_dir / m.get("path", "1_Pooling")
    pool_cfg = pooling_dir / "config.json"
    if pool_cfg.exists():
        p = _read_json(pool_cfg)
        if p.get("pooling_mode_cls_token"):
            out["pooling"] = "cls"
        elif p.get("pooling_mode_mean_tokens"):
            out["pooling"] = "mean"
        else:
            raise EmbeddingError(f"{pool_cfg}: only CLS or mean pooling is supported")
        if p.get("word_embedding_dimension"):
            out["dims"] = int(p["word_embedding_dimension"])
    sbert = model_dir / "sentence_bert_config.json"
    if sbert.exists():
        msl = _read_json(sbert).get("max_seq_length")
        if msl:
            out["max_length"] = int(msl)
    st_cfg = model_dir / "config_sentence_transformers.json"
    if st_cfg.exists():
        prompts = _read_json(st_cfg).get("prompts") or {}
        if isinstance(prompts, dict) and prompts.get("query"):
            out["query_prefix"] = str(prompts["query"])
    return out


def infer_max_length(model_dir: Path) -> int:
    """Fallbacks when sentence-transformers does not say: tokenizer_config, then config.json."""
    tok_cfg = model_dir / "tokenizer_config.json"
    if tok_cfg.exists():
        mml = _read_json(tok_cfg).get("model_max_length")
        # HF writes a huge sentinel (1e30) when the length is unknown
        if isinstance(mml, int | float) and 0 < mml <= 100_000:
            return int(mml)
    cfg = model_dir / "config.json"
    if cfg.exists():
        mpe = _read_json(cfg).get("max_position_embeddings")
        if mpe:
            return int(mpe)
    return 512


def load_model_config(model_dir: Path) -> ModelConfig:
    """The model's description: our metadata file first, else sentence-transformers files."""
    meta = model_dir / METADATA_FILE
    if meta.exists():
        return ModelConfig.from_dict(_read_json(meta))
    found = infer_sentence_transformers(model_dir)
    if "pooling" not in found:
        raise EmbeddingError(
            f"{model_dir}: no {METADATA_FILE} and no sentence-transformers pooling config; "
            "import it with `hatiproxy model import DIR --pooling cls|mean`"
        )
    found.setdefault("max_length", infer_max_length(model_dir))
    found.setdefault("normalize", True)
    return ModelConfig(name=model_dir.name, **found)
