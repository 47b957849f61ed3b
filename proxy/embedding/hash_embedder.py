"""Deterministic SHA-256-seeded vectors: for unit tests only.

Meaningless semantically. A server uses it only when configured explicitly
(`HATIDATA_EMBEDDING_PROVIDER=hash`), never as a fallback for a missing model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from .provider import Mode, check_mode, l2_normalize


class HashEmbedder:
    def __init__(self, dims: int = 384, *, query_prefix: str = "") -> None:
        if dims <= 0:
            raise ValueError("dims must be positive")
        self._dims = dims
        self._query_prefix = query_prefix
        self.calls = 0  # number of embed_batch calls: lets tests prove a cache hit
        self.texts_embedded = 0

    @property
    def model_name(self) -> str:
        return f"hash-{self._dims}"

    @property
    def model_id(self) -> str:
        return f"hash-{self._dims}"

    @property
    def dimensions(self) -> int:
        return self._dims

    def describe(self) -> str:
        return f"{self.model_name} (TEST ONLY: hash vectors without meaning)"

    def _vector(self, text: str) -> np.ndarray:
        seed = hashlib.sha256(text.encode("utf-8")).digest()
        rng = np.random.default_rng(int.from_bytes(seed, "big"))
        return rng.standard_normal(self._dims)

    def embed_batch(self, texts: Sequence[str], *, mode: Mode = "passage") -> np.ndarray:
        check_mode(mode)
        self.calls += 1
        self.texts_embedded += len(texts)
        prefix = self._query_prefix if mode == "query" else ""
        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        rows = np.stack([self._vector(prefix + t) for t in texts])
        return l2_normalize(rows).astype(np.float32)

    def embed(self, text: str, *, mode: Mode = "passage") -> np.ndarray:
        return self.embed_batch([text], mode=mode)[0]
