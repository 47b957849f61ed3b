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
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import duckdb
import sqlglot
from sqlglot import exp

from proxy.core.sqltext import quote_ident
from proxy.db.commit_clock import CLOCK
from proxy.db.low_priority import run_low_priority
from proxy.wire.errors import PgError

if TYPE_CHECKING:
    from proxy.db.engine import Engine

log = logging.getLogger("hatiproxy.embed_columns")

REGISTRY = "_hatidata_embedded_columns"
_CALL = re.compile(r"^\s*SELECT\s+(?:main\.)?hatiproxy_embed_column\s*\(", re.IGNORECASE)


def is_embed_column_call(sql: str) -> bool:
    # The name first: the pattern's match allocates its stack on every call (~10k
    # instructions, a point SELECT asks once per Execute) and most texts lack the name.
    return "embed_column" in sql.lower() and bool(_CALL.match(sql))


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


Report = Callable[[str], None]  # where progress lines go besides the log (a wire NOTICE)
# Asked between model passes: has the work been interrupted (cancel, statement timeout,
# client gone, server shutdown)? A model pass is Python and ONNX, not DuckDB, so
# cursor.interrupt() alone cannot stop it.
Stop = Callable[[], bool]

FILL_CHUNK = 1000  # rows read and written back per round
EMBED_STEP = 250  # texts per progress step
# texts per embedder call: one forward pass, then the stop check. A query ends the pass in
# progress (worker.py), which is then run again: short passes waste less.
EMBED_PASS = 16
PROGRESS_INTERVAL_S = 2.0  # report at least this often while the work goes on...
PROGRESS_STEP = 0.1  # ...and at every further 10% of a fill of more than FILL_CHUNK rows


class FillProgress:
    """Progress of one long fill, as lines like `embedded 2000 of 5000 rows of docs.content
    (40%, 3.1 s)`: logged at INFO and handed to `report`.

    A fill of more than one chunk reports every PROGRESS_STEP of its rows; any fill that
    runs for PROGRESS_INTERVAL_S reports at least that often; short fills say nothing.
    Called on the thread doing the work.
    """

    def __init__(
        self,
        table: str,
        column: str,
        report: Report | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table, self.column = table, column
        self.report = report
        self.clock = clock
        self.started = self.last_at = clock()
        self.total = 0
        self.done = 0
        self.last_done = 0
        self.reported = False  # said anything yet: then the end is reported too

    def start(self, total: int) -> None:
        self.total = total

    def advance(self, rows: int) -> None:
        self.done += rows
        now = self.clock()
        big = self.total > FILL_CHUNK
        if now - self.last_at >= PROGRESS_INTERVAL_S or (
            big and self.done - self.last_done >= PROGRESS_STEP * self.total
        ):
            self._rows(now)

    def finish(self) -> None:
        if self.reported and self.done != self.last_done:
            self._rows(self.clock())

    def say(self, message: str) -> None:
        """A step of the work (an index build), reported like the row counts."""
        self.reported = True
        log.info("%s", message)
        if self.report is not None:
            self.report(message)

    def _rows(self, now: float) -> None:
        total = max(self.total, self.done)  # rows added meanwhile are embedded too
        percent = 100 * self.done // total if total else 100
        self.last_at, self.last_done = now, self.done
        self.say(
            f"embedded {self.done} of {total} rows of {self.table}.{self.column} "
            f"({percent}%, {now - self.started:.1f} s)"
        )


def embed_column(
    cur: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    dims: int,
    embedder: Any,
    report: Report | None = None,
    stop: Stop | None = None,
) -> int:
    """Set up the vector column and index and fill it; returns rows embedded.

    Each step commits on its own and is idempotent, so a failed call can simply be
    repeated. (One transaction around ADD COLUMN + UPDATE + CREATE INDEX makes a
    later UPDATE of the table segfault in DuckDB 1.5.5 — reproduced.) A long fill and
    the index build report their progress (FillProgress) to the log and to `report`.
    When `stop()` turns true the fill writes the vectors it has and raises
    duckdb.InterruptException (57014), within one model pass.
    """
    return _embed_column(cur, table, column, dims, embedder, report, stop)


def _embed_column(
    cur: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    dims: int,
    embedder: Any,
    report: Report | None,
    stop: Stop | None,
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
    progress = FillProgress(table, column, report)
    filled = fill(cur, table, column, embedder, progress, stop)
    _check(stop)
    _create_index(cur, table, vec, progress)
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {REGISTRY} (table_name VARCHAR, column_name VARCHAR, "
        "vector_column VARCHAR, PRIMARY KEY (table_name, column_name))"
    )
    cur.execute(f"INSERT OR IGNORE INTO {REGISTRY} VALUES (?, ?, ?)", [table, column, vec])
    if filled >= FILL_CHUNK:
        _checkpoint(cur)
    return filled


def _checkpoint(cur: duckdb.DuckDBPyConnection) -> None:
    """A big fill leaves megabytes of vectors in the WAL: fold them into the database file
    now, on a connection of its own (the caller may be inside a transaction)."""
    try:
        with cur.cursor() as other:  # writing the index out is CPU too: behind queries
            run_low_priority(lambda: other.execute("CHECKPOINT"), "hati-checkpoint")
    except duckdb.Error as exc:  # DuckDB checkpoints by itself later; nothing is lost
        log.debug("checkpoint after a fill skipped: %s", exc)


def _create_index(
    cur: duckdb.DuckDBPyConnection, table: str, vec: str, progress: FillProgress
) -> None:
    """The HNSW index (cosine) on the vector column; a build over many rows is reported."""
    name = f"{table}_{vec}_hnsw"
    t, v = quote_ident(table), quote_ident(vec)
    sql = f"CREATE INDEX IF NOT EXISTS {quote_ident(name)} ON {t} USING HNSW ({v}) "
    sql += "WITH (metric = 'cosine')"
    exists = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_indexes() WHERE schema_name = 'main' AND index_name = ?",
        [name],
    ).fetchone()[0]
    rows = 0 if exists else cur.execute(f"SELECT count({v}) FROM {t}").fetchone()[0]
    if not (rows > FILL_CHUNK or (rows and progress.reported)):
        cur.execute(sql)
        return
    progress.say(f"building HNSW index {name} on {table}.{vec} ({rows} rows)")
    started = time.monotonic()
    # Seconds of pure CPU (proxy/db/low_priority.py): at the lowest priority, so queries
    # running meanwhile keep their latency.
    run_low_priority(lambda: cur.execute(sql), "hati-hnsw-build")
    progress.say(f"built HNSW index {name} in {time.monotonic() - started:.1f} s")


def fill(
    cur: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    embedder: Any,
    progress: FillProgress | None = None,
    stop: Stop | None = None,
) -> int:
    """Embed rows whose vector is missing (new rows, or text set after the vector).

    Vectors are computed here and joined in by rowid: an UPDATE that calls the Python
    UDF on an HNSW-indexed table crashes DuckDB 1.5.5 (segfault, reproduced). Each round
    of FILL_CHUNK rows commits; interrupted (`stop()`), the rows embedded so far in the
    round are written first, then duckdb.InterruptException is raised.
    """
    t, c, v = quote_ident(table), quote_ident(column), quote_ident(vector_column(column))
    missing = f"{v} IS NULL AND {c} IS NOT NULL"
    progress = progress or FillProgress(table, column)
    total = 0
    while True:
        rows = cur.execute(
            f"SELECT rowid, {c} FROM {t} WHERE {missing} LIMIT {FILL_CHUNK}"
        ).fetchall()
        if not rows:
            progress.finish()
            return total
        if total == 0:  # the rows to do: counted only when there are more than one round's
            more = len(rows) == FILL_CHUNK
            count = f"SELECT count(*) FROM {t} WHERE {missing}"
            progress.start(cur.execute(count).fetchone()[0] if more else len(rows))
        done, vecs = _embed(embedder, [r[1] for r in rows], progress, stop)
        if done:
            _write(cur, t, v, [rows[i][0] for i in done], vecs)
        total += len(done)
        if len(done) < len(rows):
            log.info(
                "embedding %s.%s interrupted after %d rows (those are stored)",
                table,
                column,
                total,
            )
            _check(lambda: True)


def _write(cur: duckdb.DuckDBPyConnection, t: str, v: str, rowids: list[int], vecs: Any) -> None:
    """Join the vectors in by rowid, in one UPDATE over an Arrow table."""
    import pyarrow as pa

    src = pa.table(
        {
            "rid": pa.array(rowids, type=pa.int64()),
            "v": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), vecs.shape[1]),
        }
    )
    cur.register("__hati_fill_src", src)
    try:
        with CLOCK.writing():  # commits on its own (the filler's autocommit cursor)
            cur.execute(f"UPDATE {t} SET {v} = s.v FROM __hati_fill_src s WHERE {t}.rowid = s.rid")
    finally:
        cur.unregister("__hati_fill_src")


def _check(stop: Stop | None) -> None:
    if stop is not None and stop():
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")


def _embed(
    embedder: Any, texts: list[str], progress: FillProgress, stop: Stop | None
) -> tuple[list[int], Any]:
    """Vectors of the texts, one model pass at a time, shortest texts first (each pass
    pads to its longest text); returns the indexes embedded (all but those left when
    `stop()` turned true) and their vectors, in that order."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    parts = []
    done = counted = 0
    for start in range(0, len(order), EMBED_PASS):
        if stop is not None and stop():
            break
        batch = order[start : start + EMBED_PASS]
        parts.append(embedder.embed_batch([texts[i] for i in batch], mode="passage"))
        done += len(batch)
        if done - counted >= EMBED_STEP or done == len(order):
            progress.advance(done - counted)
            counted = done
    if not parts:
        return [], None
    return order[:done], np.concatenate(parts)


def registered(cur: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    # Read directly (no registry yet: none registered). The filler asks every interval;
    # asking information_schema.tables first cost ~15 ms of CPU each time.
    try:
        rows = cur.execute(f"SELECT table_name, column_name FROM {REGISTRY}").fetchall()
    except duckdb.CatalogException:
        return []
    return [(r[0], r[1]) for r in rows]


async def filler(
    engine: Engine, embedder: Any, interval_s: float, stop: Stop | None = None
) -> None:
    """Background task: keep every registered column's vectors filled; `stop()` (the
    server shutting down) ends a fill within one model pass."""
    cur = await engine.run_uncounted(engine.cursor)
    try:
        while True:
            await asyncio.sleep(interval_s)
            try:
                # Uncounted: fill() counts its UPDATEs itself, so the reads of every
                # round do not refuse savepoint replays (commit_clock.py).
                await engine.run_uncounted(_fill_all, cur, embedder, stop)
            except duckdb.InterruptException:
                return  # shutting down
            except Exception as exc:  # a dropped table etc.: log, try next round
                log.warning("embedding filler: %s", exc)
    finally:
        cur.close()


def _fill_all(cur: duckdb.DuckDBPyConnection, embedder: Any, stop: Stop | None) -> None:
    for table, column in registered(cur):
        n = fill(cur, table, column, embedder, stop=stop)
        if n:
            log.info("embedded %d new rows of %s.%s", n, table, column)
