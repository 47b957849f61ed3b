"""CachedEmbedder: an in-memory LRU over a persistent DuckDB table, in front of a provider.

Key: (provider.model_id, mode, sha256(text)). Concurrent callers asking for the same new
text share one model call (in-flight futures), so a text never reaches the model twice. `model_id` names the exact weights, so a
re-imported checkpoint never gets another model's vectors. Vectors are stored as FLOAT[]
(a list, not FLOAT[N]) so one table serves models of different sizes; cast to
FLOAT[dims] in SQL when needed. A DuckDB connection is not safe across threads, and the
worker embeds off the event loop, so every table access holds a lock.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Protocol

import duckdb
import numpy as np

from .provider import EmbeddingProvider, Mode, check_mode

TABLE = "_hatidata_embedding_cache"
DEFAULT_LRU_SIZE = 10_000


class EmbeddingObserver(Protocol):
    """Told about cache lookups and model calls (the server's metrics); keeps this package
    free of server imports. Called on worker threads: implementations must be thread-safe."""

    def observe_cache(self, hits: int, misses: int) -> None: ...

    def observe_model_call(self, texts: int, seconds: float) -> None: ...


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """Same interface as the wrapped provider; repeated texts never reach the model."""

    def __init__(
        self,
        provider: EmbeddingProvider,
        con: duckdb.DuckDBPyConnection | None = None,
        *,
        lru_size: int = DEFAULT_LRU_SIZE,
    ) -> None:
        self.provider = provider
        self._con = con
        self._lru: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lru_size = lru_size
        self._lock = threading.Lock()
        # (model/mode, key) -> result of an embedding another thread is computing right now
        self._inflight: dict[tuple[str, str], Future[np.ndarray]] = {}
        self._db_lock = threading.Lock()
        self.hits = 0  # LRU hits
        self.db_hits = 0  # found in the table after an LRU miss
        self.misses = 0  # texts sent to the model
        self.observer: EmbeddingObserver | None = None  # set by the owner (metrics)
        if con is not None:
            con.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} ("
                " model VARCHAR NOT NULL, mode VARCHAR NOT NULL, text_sha256 VARCHAR NOT NULL,"
                " vec FLOAT[] NOT NULL, created_at TIMESTAMP DEFAULT current_timestamp,"
                " PRIMARY KEY (model, mode, text_sha256))"
            )

    @property
    def model_name(self) -> str:
        return self.provider.model_name

    @property
    def model_id(self) -> str:
        return self.provider.model_id

    @property
    def dimensions(self) -> int:
        return self.provider.dimensions

    def embed(self, text: str, *, mode: Mode = "passage") -> np.ndarray:
        return self.embed_batch([text], mode=mode)[0]

    def embed_batch(self, texts: Sequence[str], *, mode: Mode = "passage") -> np.ndarray:
        check_mode(mode)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        model_id = self.model_id
        prefix = f"{model_id}\x00{mode}"
        todo: dict[str, list[int]] = {}  # key -> rows still to fill (dedupes repeats)
        for i, t in enumerate(texts):
            todo.setdefault(text_key(t), []).append(i)
        owned: dict[str, Future[np.ndarray]] = {}  # keys this call computes
        waiting: dict[str, Future[np.ndarray]] = {}  # keys another thread is computing
        lru_hits = 0
        with self._lock:  # LRU lookup and in-flight registration are one atomic step
            for k in list(todo):
                vec = self._lru.get((prefix, k))
                if vec is not None:
                    self._lru.move_to_end((prefix, k))
                    out[todo.pop(k)] = vec
                    self.hits += 1
                    lru_hits += 1
                elif (prefix, k) in self._inflight:
                    waiting[k] = self._inflight[(prefix, k)]
                else:
                    owned[k] = self._inflight[(prefix, k)] = Future()
        if self.observer is not None and (lru_hits or waiting):
            # A text another thread is embedding costs this call no model work: a hit.
            self.observer.observe_cache(lru_hits + len(waiting), 0)
        if owned:
            self._compute(model_id, mode, prefix, owned, {k: texts[todo[k][0]] for k in owned})
        for k, fut in {**owned, **waiting}.items():
            out[todo[k]] = fut.result()  # re-raises the model's error for every caller
        return out

    def _compute(
        self,
        model_id: str,
        mode: Mode,
        prefix: str,
        owned: dict[str, Future[np.ndarray]],
        texts: dict[str, str],
    ) -> None:
        """Fill `owned` futures from the table or the model, then publish to the LRU."""
        try:
            found = self._db_get(model_id, mode, list(owned)) if self._con is not None else {}
            self.db_hits += len(found)
            missing = [k for k in owned if k not in found]
            observer = self.observer
            if observer is not None:
                observer.observe_cache(len(found), len(missing))
            if missing:
                self.misses += len(missing)
                started = time.perf_counter()
                vecs = self.provider.embed_batch([texts[k] for k in missing], mode=mode)
                if observer is not None:
                    observer.observe_model_call(len(missing), time.perf_counter() - started)
                fresh = dict(zip(missing, vecs, strict=True))
                if self._con is not None:
                    self._db_put(model_id, mode, fresh)
                found.update(fresh)
        except BaseException as e:
            with self._lock:
                for k, fut in owned.items():
                    self._inflight.pop((prefix, k), None)
                    fut.set_exception(e)
            raise
        with self._lock:
            for k, fut in owned.items():
                vec = np.asarray(found[k], dtype=np.float32)
                vec.flags.writeable = False  # shared between callers via the LRU
                self._lru[(prefix, k)] = vec
                self._inflight.pop((prefix, k), None)
                fut.set_result(vec)
            while len(self._lru) > self._lru_size:
                self._lru.popitem(last=False)

    def _db_get(self, model_id: str, mode: str, keys: list[str]) -> dict[str, np.ndarray]:
        with self._db_lock:
            rows = self._con.execute(  # type: ignore[union-attr]
                f"SELECT text_sha256, vec FROM {TABLE} WHERE model = ? AND mode = ?"
                " AND text_sha256 IN (SELECT unnest(?::VARCHAR[]))",
                [model_id, mode, keys],
            ).fetchall()
        dims = self.dimensions
        return {
            k: np.asarray(v, dtype=np.float32) for k, v in rows if v is not None and len(v) == dims
        }

    def _db_put(self, model_id: str, mode: str, fresh: dict[str, np.ndarray]) -> None:
        keys = list(fresh)
        vecs = [fresh[k].tolist() for k in keys]
        with self._db_lock:
            self._con.execute(  # type: ignore[union-attr]
                f"INSERT OR REPLACE INTO {TABLE} (model, mode, text_sha256, vec)"
                " SELECT ?, ?, unnest(?::VARCHAR[]), unnest(?::FLOAT[][])",
                [model_id, mode, keys, vecs],
            )

    def clear_memory(self) -> None:
        """Drop the in-memory LRU (the table stays); tests use it to simulate a restart."""
        with self._lock:
            self._lru.clear()
