"""Searchable text columns without managing vectors by hand.

`SELECT hatiproxy_embed_column('docs', 'content')` adds `content_embedding
FLOAT[dims]` to `docs`, fills it for existing rows, creates an HNSW index
(cosine) on it and registers the pair in `_hatidata_embedded_columns`; the
background filler then embeds new or changed rows every flush interval. Query
it with `semantic_rank(content_embedding, 'text')` (HNSW-served ORDER BY ... LIMIT).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

import duckdb
import sqlglot
from sqlglot import exp

from proxy.core.sqltext import quote_ident
from proxy.db.commit_clock import CLOCK
from proxy.wire.errors import PgError

if TYPE_CHECKING:
    from proxy.db.engine import Engine

log = logging.getLogger("hatiproxy.embed_columns")

REGISTRY = "_hatidata_embedded_columns"
_CALL = re.compile(r"^\s*SELECT\s+(?:main\.)?hatiproxy_embed_column\s*\(", re.IGNORECASE)


def is_embed_column_call(sql: str) -> bool:
    return bool(_CALL.match(sql))


def parse_call(sql: str) -> tuple[str, str]:
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise PgError("42601", f"hatiproxy_embed_column: {exc}") from None
    call = tree.find(exp.Anonymous)
    args = call.expressions if call is not None else []
    if len(args) != 2 or not all(isinstance(a, exp.Literal) and a.is_string for a in args):
        raise PgError(
            "42883",
            "hatiproxy_embed_column(table text, column text) takes two string literals",
            hint="Example: SELECT hatiproxy_embed_column('docs', 'content')",
        )
    return args[0].this, args[1].this


def vector_column(column: str) -> str:
    return f"{column}_embedding"


def embed_column(
    cur: duckdb.DuckDBPyConnection, table: str, column: str, dims: int, embedder: Any
) -> int:
    """Set up the vector column and index and fill it; returns rows embedded.

    Each step commits on its own and is idempotent, so a failed call can simply be
    repeated. (One transaction around ADD COLUMN + UPDATE + CREATE INDEX makes a
    later UPDATE of the table segfault in DuckDB 1.5.5 — reproduced.)
    """
    return _embed_column(cur, table, column, dims, embedder)


def _embed_column(
    cur: duckdb.DuckDBPyConnection, table: str, column: str, dims: int, embedder: Any
) -> int:
    cols = cur.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name = ?",
        [table],
    ).fetchall()
    if not cols:
        raise PgError("42P01", f'relation "{table}" does not exist')
    types = {name: dtype for name, dtype in cols}
    if column not in types:
        raise PgError("42703", f'column "{column}" of relation "{table}" does not exist')
    if types[column] != "VARCHAR":
        raise PgError("42804", f'column "{column}" is {types[column]}, not text')
    vec = vector_column(column)
    t, v = quote_ident(table), quote_ident(vec)
    if vec not in types:
        cur.execute(f"ALTER TABLE {t} ADD COLUMN {v} FLOAT[{dims}]")
    filled = fill(cur, table, column, embedder)
    index = quote_ident(f"{table}_{vec}_hnsw")
    cur.execute(
        f"CREATE INDEX IF NOT EXISTS {index} ON {t} USING HNSW ({v}) WITH (metric = 'cosine')"
    )
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {REGISTRY} (table_name VARCHAR, column_name VARCHAR, "
        "vector_column VARCHAR, PRIMARY KEY (table_name, column_name))"
    )
    cur.execute(f"INSERT OR IGNORE INTO {REGISTRY} VALUES (?, ?, ?)", [table, column, vec])
    return filled


FILL_CHUNK = 1000


def fill(cur: duckdb.DuckDBPyConnection, table: str, column: str, embedder: Any) -> int:
    """Embed rows whose vector is missing (new rows, or text set after the vector).

    Vectors are computed here and joined in by rowid: an UPDATE that calls the Python
    UDF on an HNSW-indexed table crashes DuckDB 1.5.5 (segfault, reproduced).
    """
    import pyarrow as pa

    t, c, v = quote_ident(table), quote_ident(column), quote_ident(vector_column(column))
    total = 0
    while True:
        rows = cur.execute(
            f"SELECT rowid, {c} FROM {t} WHERE {v} IS NULL AND {c} IS NOT NULL LIMIT {FILL_CHUNK}"
        ).fetchall()
        if not rows:
            return total
        vecs = embedder.embed_batch([r[1] for r in rows], mode="passage")
        dims = vecs.shape[1]
        src = pa.table(
            {
                "rid": pa.array([r[0] for r in rows], type=pa.int64()),
                "v": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dims),
            }
        )
        cur.register("__hati_fill_src", src)
        try:
            with CLOCK.writing():  # commits on its own (the filler's autocommit cursor)
                cur.execute(
                    f"UPDATE {t} SET {v} = s.v FROM __hati_fill_src s WHERE {t}.rowid = s.rid"
                )
        finally:
            cur.unregister("__hati_fill_src")
        total += len(rows)


def registered(cur: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    exists = cur.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [REGISTRY]
    ).fetchone()[0]
    if not exists:
        return []
    rows = cur.execute(f"SELECT table_name, column_name FROM {REGISTRY}").fetchall()
    return [(r[0], r[1]) for r in rows]


async def filler(engine: Engine, embedder: Any, interval_s: float) -> None:
    """Background task: keep every registered column's vectors filled."""
    cur = await engine.run_uncounted(engine.cursor)
    try:
        while True:
            await asyncio.sleep(interval_s)
            try:
                # Uncounted: fill() counts its UPDATEs itself, so the reads of every
                # round do not refuse savepoint replays (commit_clock.py).
                await engine.run_uncounted(_fill_all, cur, embedder)
            except Exception as exc:  # a dropped table etc.: log, try next round
                log.warning("embedding filler: %s", exc)
    finally:
        cur.close()


def _fill_all(cur: duckdb.DuckDBPyConnection, embedder: Any) -> None:
    for table, column in registered(cur):
        n = fill(cur, table, column, embedder)
        if n:
            log.info("embedded %d new rows of %s.%s", n, table, column)
