"""Embeddings for semantic SQL: providers, the ONNX embedder, model management, cache, worker.

Typical server use:

    provider = open_provider(model_cache_dir(data_dir))        # ModelNotAvailable -> 58000
    cached = CachedEmbedder(provider, duckdb_cursor)            # LRU + _hatidata_embedding_cache
    worker = EmbeddingWorker(cached); await worker.start()
    vecs = await worker.embed_now(marker_texts, "query")        # a statement's own markers
    vecs = await worker.submit(column_values, "passage")        # background, batched
    cached.observer = metrics                                   # optional: cache/model stats
"""

from .cache import DEFAULT_LRU_SIZE, CachedEmbedder, EmbeddingObserver
from .cache import TABLE as CACHE_TABLE
from .errors import ChecksumMismatch, ConversionError, EmbeddingError, ModelNotAvailable
from .hash_embedder import HashEmbedder
from .loader import open_provider, provider_summary, resolve_model_dir
from .manage import ensure_default_model, import_dir, list_models, pull, verify
from .provider import EmbeddingProvider, Mode
from .registry import KNOWN_MODELS, default_model_name, match_threshold, model_cache_dir
from .worker import EmbeddingWorker


def __getattr__(name: str):  # OnnxEmbedder imports onnxruntime: load it on first use only
    if name == "OnnxEmbedder":
        from .onnx_embedder import OnnxEmbedder

        return OnnxEmbedder
    if name == "convert_checkpoint":
        from .converter import convert_checkpoint

        return convert_checkpoint
    raise AttributeError(name)


__all__ = [
    "CACHE_TABLE",
    "DEFAULT_LRU_SIZE",
    "KNOWN_MODELS",
    "CachedEmbedder",
    "ChecksumMismatch",
    "ConversionError",
    "EmbeddingError",
    "EmbeddingObserver",
    "EmbeddingProvider",
    "EmbeddingWorker",
    "HashEmbedder",
    "Mode",
    "ModelNotAvailable",
    "OnnxEmbedder",
    "convert_checkpoint",
    "default_model_name",
    "ensure_default_model",
    "import_dir",
    "list_models",
    "match_threshold",
    "model_cache_dir",
    "open_provider",
    "provider_summary",
    "pull",
    "resolve_model_dir",
    "verify",
]
