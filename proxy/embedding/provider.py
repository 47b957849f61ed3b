"""The provider interface every embedder implements, plus small shared helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Mode = Literal["query", "passage"]
MODES: tuple[Mode, ...] = ("query", "passage")


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into float32 vectors of a fixed size.

    `mode="query"` is for short search texts (gets the model's query instruction, if any);
    `mode="passage"` for stored documents. `model_id` identifies the exact weights and is
    what caches key on, so re-importing a different checkpoint under the same name never
    serves stale vectors.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed_batch(self, texts: Sequence[str], *, mode: Mode = "passage") -> np.ndarray: ...

    def embed(self, text: str, *, mode: Mode = "passage") -> np.ndarray: ...


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise ValueError(f"embedding mode must be 'query' or 'passage', not {mode!r}")
    return mode  # type: ignore[return-value]


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-wise unit length; all-zero rows stay zero instead of becoming NaN."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return vectors / norms
