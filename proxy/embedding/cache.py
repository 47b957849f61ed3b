"""CachedEmbedder: an in-memory LRU over a persistent DuckDB table, in front of a provider.

Key: (provider.model_id, mode, sha256(text)). Concurrent callers asking for the same new
text share one model call (in-flight futures), so a text never reaches the model twice. `model_id` names the exact weights, so a
re-imported checkpoint never gets another model's vectors. Vectors are stored as FLOAT[]
(a list, not FLOAT[N]) so one table serves models of different sizes; cast to
FLOAT[dims] in SQL when needed. A DuckDB connection is not safe across threads, and the
worker embeds off the event loop, so every table access holds a lock.

The table is written behind: a new vector is handed to the caller at once and written by
a background thread (an insert and its commit cost ~10 ms, more than the model call for a
short query). The writer gathers entries for up to `write_delay` seconds (or
`write_batch` entries) so a stream of fresh search texts costs one commit per interval,
not one each: per-text commits took 2-4 ms off the p50 of the next searches and caused
100-200 ms p99 spikes (bench/memory.py, 100k memories). Every gathered entry goes in one
INSERT over an Arrow table: passing the vectors as Python lists made DuckDB convert each
float while holding the GIL (~1 ms an entry; 3,000 entries held every other thread of
the server for up to 1.4 s), so under a column fill the writer fell minutes behind and
stalled queries (bench/embed_column.py). Until written, entries are served from
memory; `flush` / `close` write what is pending at once (the server closes the cache at
shutdown). A crash can lose the last interval's entries, which only means embedding
those texts again. Once the writer has been idle for `CHECKPOINT_IDLE_S` it checkpoints
the database if its WAL has grown past `CHECKPOINT_WAL_BYTES`, so the WAL stays small
after bulk work. Lookups go by a
single-column primary key (`key` = 'model|mode|sha256'; the hash is hex, so it parses), which DuckDB answers
from its index instead of scanning the table. The table is two generation tables under a
view (cache_table.py), so its row bound also bounds its memory.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Protocol

import duckdb
import numpy as np

from .cache_table import CacheTables
from .provider import EmbeddingProvider, Mode, check_mode

TABLE = "_hatidata_embedding_cache"
# Vectors kept in RAM (setting embedding_cache_entries), ~1.9 KB each at 384 dims with
# their keys: ~8 MiB. Behind it the table answers in ~0.3-1 ms, so the LRU only has to
# hold the hot texts (repeated searches); 10,000 took ~15 minutes of fresh texts to fill
# under bench/rss.py, and the RSS rose with it.
DEFAULT_LRU_SIZE = 4_096
# Up to this many keys are looked up one by one through the primary-key index; a bigger
# batch (the background worker's) reads them in one scan.
_INDEXED_LOOKUPS = 8
# Longest a computed vector waits before its table write starts: with the insert itself an
# entry is committed about half a second after its model call (the README's promise).
WRITE_DELAY_S = 0.25
WRITE_BATCH = 512  # ... unless this many are waiting
# When the writer has been idle a while and the database's WAL is bigger than this, it
# checkpoints.
CHECKPOINT_WAL_BYTES = 4 << 20
CHECKPOINT_IDLE_S = 2.0  # ... once it has been idle this long
# Rows the table keeps (setting embedding_cache_table_rows), in two generations of half
# each (cache_table.py: deleted rows would keep their memory), so a stream of fresh texts
# (every stored memory) does not grow the file and DuckDB's buffer pool: ~1.35 KB of
# buffer pool and up to ~2.9 KB of file per row at 384 dims. 0 = no bound.
DEFAULT_TABLE_ROWS = 20_000
_SRC = "__hati_cache_rows"  # the Arrow table of one write, registered on the writer's cursor

log = logging.getLogger("hatiproxy.embedding.cache")
_Entry = tuple[str, str, str, np.ndarray, float]  # model, mode, text hash, vector, computed at

# Caches whose writer thread runs. At exit each writes what is pending: a daemon thread
# still inside DuckDB while the interpreter finalizes aborts the process.
_WRITING: weakref.WeakSet[CachedEmbedder] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for cache in list(_WRITING):
        cache.close()


class EmbeddingObserver(Protocol):
    """Told about cache lookups and model calls (the server's metrics); keeps this package
    free of server imports. Called on worker threads: implementations must be thread-safe."""

    def observe_cache(self, hits: int, misses: int) -> None: ...

    def observe_model_call(self, texts: int, seconds: float) -> None: ...

    def observe_cache_commit(self, entries: int, lag_s: float) -> None:
        """`entries` reached the table; the oldest had waited `lag_s` since its model call."""


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
        write_delay: float = WRITE_DELAY_S,
        write_batch: int = WRITE_BATCH,
        table_rows: int = DEFAULT_TABLE_ROWS,
    ) -> None:
        self.provider = provider
        self._con = con
        self._lru: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lru_size = lru_size
        self._lock = threading.Lock()
        # (model/mode, key) -> result of an embedding another thread is computing right now
        self._inflight: dict[tuple[str, str], Future[np.ndarray]] = {}
        self._db_lock = threading.Lock()  # lookups share self._con
        # The writer thread's own cursor: a write in progress never holds up a lookup.
        self._write_con = con.cursor() if con is not None else None
        # Written behind: key -> (model, mode, text hash, vector, monotonic time computed),
        # not in the table yet.
        self._pending: dict[str, _Entry] = {}
        self._pending_changed = threading.Condition(self._lock)
        self._writer: threading.Thread | None = None
        self._closing = False
        self._write_delay = write_delay
        self._write_batch = max(1, write_batch)
        self._flushers = 0  # callers of flush() waiting: write without the delay
        self.writes = 0  # batches written to the table
        self.committed = 0  # entries written to the table
        self.checkpoints = 0  # CHECKPOINTs run by the writer once idle
        self._table_rows = max(0, table_rows)
        self.trimmed = 0  # rows dropped (with their generation) to keep within _table_rows
        self._wal: Path | None = None  # the database's WAL file (None: in memory / unknown)
        self._wal_known = False
        self._checkpoint_due = False  # written since the last check of the WAL
        self.hits = 0  # LRU hits
        self.db_hits = 0  # found in the table (or its pending writes) after an LRU miss
        self.misses = 0  # texts sent to the model
        self.observer: EmbeddingObserver | None = None  # set by the owner (metrics)
        # Hashes of the keys in the table (sorted, loaded once) and of those added since:
        # a text in neither is new, and skips the table lookup (~0.3-1 ms per fresh
        # search text). Only this object writes the table (DuckDB opens a file in one
        # process); a false "maybe" costs one lookup, never a wrong vector.
        self._stored = np.zeros(0, dtype=np.int64)
        self._added: set[int] = set()
        self._tables: CacheTables | None = None
        if con is not None:
            self._tables = CacheTables(con, TABLE)
            self._stored = _hashes(self._tables.keys(con))

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

    def embed_batch(
        self, texts: Sequence[str], *, mode: Mode = "passage", persist: bool = True
    ) -> np.ndarray:
        """persist=False: for vectors the caller stores durably itself (a memory's are in
        its vectors table, reloaded from there at start): new ones go to the LRU only,
        not to the table (whose row bound they would fill with texts searched seldom)."""
        check_mode(mode)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        model_id = self.model_id
        prefix = sys.intern(f"{model_id}|{mode}")  # one string for every LRU key
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
            self._compute(
                model_id, mode, prefix, owned, {k: texts[todo[k][0]] for k in owned}, persist
            )
        for k, fut in owned.items():
            out[todo[k]] = fut.result()  # re-raises the model's error
        for k, fut in waiting.items():
            try:
                out[todo[k]] = fut.result()
            except Exception:  # noqa: BLE001 - its owner's pass may have been ended by a
                # query (worker.py's bulk passes): embed it here; a real error recurs
                out[todo[k]] = self.embed_batch([texts[todo[k][0]]], mode=mode)[0]
        return out

    def _compute(
        self,
        model_id: str,
        mode: Mode,
        prefix: str,
        owned: dict[str, Future[np.ndarray]],
        texts: dict[str, str],
        persist: bool = True,
    ) -> None:
        """Fill `owned` futures from the table or the model, then publish to the LRU (and,
        if `persist`, the table)."""
        try:
            found = self._take_pending(prefix, list(owned))
            rest = [k for k in owned if k not in found and self._maybe_stored(f"{prefix}|{k}")]
            if rest and self._con is not None:
                found.update(self._db_get(prefix, rest))
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
                if self._con is not None and persist:
                    self._write_behind(model_id, mode, prefix, fresh)
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
                if vec.base is not None:  # a row of the model's batch: kept alone, it
                    vec = vec.copy()  # would keep the whole batch (the LRU's bound is rows)
                vec.flags.writeable = False  # shared between callers via the LRU
                self._lru[(prefix, k)] = vec
                self._inflight.pop((prefix, k), None)
                fut.set_result(vec)
            while len(self._lru) > self._lru_size:
                self._lru.popitem(last=False)

    # --- the table ---------------------------------------------------------------

    def _take_pending(self, prefix: str, keys: list[str]) -> dict[str, np.ndarray]:
        """Vectors of `keys` still waiting to be written (evicted from the LRU meanwhile)."""
        if not self._pending:
            return {}
        with self._lock:
            rows = {k: self._pending.get(f"{prefix}|{k}") for k in keys}
        return {k: row[3] for k, row in rows.items() if row is not None}

    def _maybe_stored(self, key: str) -> bool:
        h = hash(key)
        if h in self._added:
            return True
        i = int(np.searchsorted(self._stored, h))
        return i < len(self._stored) and int(self._stored[i]) == h

    def _db_get(self, prefix: str, keys: list[str]) -> dict[str, np.ndarray]:
        full = [f"{prefix}|{k}" for k in keys]
        rows: list[tuple[str, list[float] | None]] = []
        with self._db_lock:  # also keeps `rotate` from dropping a table being read
            con, tables = self._con, self._tables
            assert con is not None and tables is not None
            for table in reversed(tables.tables):  # newest first
                if rows:
                    seen = {r[0] for r in rows}
                    full = [k for k in full if k not in seen]
                if not full:
                    break
                if len(full) <= _INDEXED_LOOKUPS:
                    for key in full:  # each one an index lookup
                        rows += con.execute(
                            f"SELECT key, vec FROM {table} WHERE key = ?", [key]
                        ).fetchall()
                else:
                    rows += con.execute(
                        f"SELECT key, vec FROM {table} WHERE key IN (SELECT unnest(?::VARCHAR[]))",
                        [full],
                    ).fetchall()
        dims = self.dimensions
        cut = len(prefix) + 1
        return {
            key[cut:]: np.asarray(v, dtype=np.float32)
            for key, v in rows
            if v is not None and len(v) == dims
        }

    def _write_behind(
        self, model_id: str, mode: str, prefix: str, fresh: dict[str, np.ndarray]
    ) -> None:
        now = time.monotonic()
        with self._lock:
            was_idle = not self._pending
            for k, vec in fresh.items():
                self._pending[f"{prefix}|{k}"] = (model_id, mode, k, vec, now)
                self._added.add(hash(f"{prefix}|{k}"))
            if self._writer is None and not self._closing:
                self._writer = threading.Thread(
                    target=self._write_loop, name="embedding-cache-writer", daemon=True
                )
                self._writer.start()
                _WRITING.add(self)
            if was_idle or len(self._pending) >= self._write_batch:  # else it is gathering
                self._pending_changed.notify_all()

    def _write_loop(self) -> None:
        while True:
            retry = False
            with self._lock:
                while not self._pending and not self._closing:
                    if self._checkpoint_due:  # once nothing came for a while: checkpoint
                        if not self._pending_changed.wait(CHECKPOINT_IDLE_S):
                            retry = True
                            break
                    else:
                        self._pending_changed.wait()
                if not self._pending and not retry:
                    return  # closing, and everything is written
            if retry:
                self._maybe_checkpoint()
                continue
            with self._lock:
                deadline = time.monotonic() + self._write_delay
                while not self._closing and not self._flushers:
                    left = deadline - time.monotonic()
                    if left <= 0 or len(self._pending) >= self._write_batch:
                        break
                    self._pending_changed.wait(left)
                batch = dict(self._pending)
            try:
                self._db_put(batch)
                self.writes += 1
                self.committed += len(batch)
                observer = self.observer
                if observer is not None:
                    oldest = min(row[4] for row in batch.values())
                    observer.observe_cache_commit(len(batch), time.monotonic() - oldest)
            except Exception as exc:  # a cache: losing an entry costs one model call later
                log.warning("embedding cache: %d vectors not stored: %s", len(batch), exc)
            tables = self._tables
            if tables is not None and self._table_rows:  # before flush() waiters see it done
                tables.newest_rows += len(batch)
                if tables.newest_rows >= max(1, self._table_rows // 2):
                    self._rotate()
            with self._lock:
                for key, row in batch.items():
                    if self._pending.get(key) is row:
                        del self._pending[key]
                self._pending_changed.notify_all()
            self._checkpoint_due = True  # checked once the writer has been idle a while

    def _db_put(self, batch: dict[str, _Entry]) -> None:
        """On the writer thread only, which alone uses _write_con: one INSERT of an Arrow
        table built from the vectors' buffers (no Python float per element)."""
        import pyarrow as pa

        rows = list(batch.values())
        vecs = [r[3] for r in rows]
        offsets = np.zeros(len(vecs) + 1, dtype=np.int32)
        np.cumsum([len(v) for v in vecs], out=offsets[1:])
        src = pa.table(
            {
                "key": pa.array(list(batch), pa.string()),
                "model": pa.array([r[0] for r in rows], pa.string()),
                "mode": pa.array([r[1] for r in rows], pa.string()),
                "text_sha256": pa.array([r[2] for r in rows], pa.string()),
                "vec": pa.ListArray.from_arrays(
                    pa.array(offsets), pa.array(np.concatenate(vecs).astype(np.float32))
                ),
            }
        )
        con, tables = self._write_con, self._tables
        assert con is not None and tables is not None
        con.register(_SRC, src)
        try:
            # The table is in the agent database: not counted on the commit clock (no client
            # transaction replays around it, and no client SQL can read it).
            con.execute(
                f"INSERT OR REPLACE INTO {tables.newest} (key, model, mode, text_sha256, vec)"
                f" SELECT key, model, mode, text_sha256, vec FROM {_SRC}"
            )
        finally:
            con.unregister(_SRC)

    def _rotate(self) -> None:
        """On the writer thread: start a new table generation, drop the oldest (its rows'
        storage and buffer-pool memory go with it) and reload the key hashes, so neither
        the tables nor `_added` grow with use."""
        con, tables = self._write_con, self._tables
        assert con is not None and tables is not None
        try:
            with self._db_lock:  # no lookup reads a table while it is dropped
                self.trimmed += tables.rotate(con)
                stored = _hashes(tables.keys(con))
            with self._lock:
                self._stored = stored
                self._added = {hash(k) for k in self._pending}
        except duckdb.Error as exc:  # tried again after the next write
            log.warning("embedding cache: starting a new table generation failed: %s", exc)

    def _maybe_checkpoint(self) -> None:
        """The writer has been idle CHECKPOINT_IDLE_S: checkpoint the database if its WAL
        has grown (a column fill leaves megabytes; DuckDB's own threshold is 16 MiB). Not
        while entries keep coming: a checkpoint competes with the work producing them."""
        con = self._write_con
        assert con is not None
        self._checkpoint_due = False
        try:
            if not self._wal_known:
                self._wal_known = True
                row = con.execute(
                    "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
                ).fetchone()
                if row and row[0] and row[0] != ":memory:":
                    self._wal = Path(row[0] + ".wal")
            if self._wal is None or not self._wal.exists():
                return
            if self._wal.stat().st_size < CHECKPOINT_WAL_BYTES:
                return
            con.execute("CHECKPOINT")
            self.checkpoints += 1
        except (OSError, duckdb.Error) as exc:  # busy: tried again after the next idle wait
            self._checkpoint_due = True
            log.info("embedding cache: checkpoint failed, will retry: %s", exc)

    @property
    def pending(self) -> int:
        """Entries computed but not yet in the table."""
        return len(self._pending)

    def flush(self) -> None:
        """Return once every vector computed so far is in the table."""
        with self._lock:
            self._flushers += 1
            self._pending_changed.notify_all()
            try:
                while self._pending and self._writer is not None and self._writer.is_alive():
                    self._pending_changed.wait(timeout=1.0)
            finally:
                self._flushers -= 1

    def close(self) -> None:
        """Write what is pending and stop the writer thread."""
        with self._lock:
            self._closing = True
            self._pending_changed.notify_all()
            writer = self._writer
        if writer is not None:
            writer.join()

    def clear_memory(self) -> None:
        """Drop the in-memory LRU (the table stays); tests use it to simulate a restart."""
        with self._lock:
            self._lru.clear()


def _hashes(keys: list[str]) -> np.ndarray:
    """Sorted hashes of the table's keys (the "maybe stored" filter)."""
    return np.unique(np.fromiter((hash(k) for k in keys), np.int64, len(keys)))
