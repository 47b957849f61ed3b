"""COPY ... TO STDOUT in text, CSV and binary format: one CopyData message a row, as
PostgreSQL sends them (clients such as psycopg's Copy.rows() parse each message as one
row). Columns with vectorised encoders go from DuckDB's Arrow batches through
`wire.arrow_rows.copy_rows`; others through the per-value encoders."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from proxy.db.backends import CopyProgress
from proxy.db.catalog import snapshot as catalog_snapshot
from proxy.pgserver import arrow_results
from proxy.pgserver.char_columns import char_columns, char_typed
from proxy.pgserver.prefetch import Prefetch, ReadAhead
from proxy.pgserver.result_shape import as_jsonb, lossless_sql, needs_cast
from proxy.pgserver.results import Column, column_encoder, columns_of
from proxy.wire import messages as m
from proxy.wire.arrow_rows import BINARY_SIGNATURE, LINE_END, copy_rows

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner


class CopyOptions(Protocol):  # copy.CopyOptions (copy.py imports this module)
    format: str
    header: bool
    quote: str
    escape: str | None

    @property
    def sep(self) -> str: ...

    @property
    def null_string(self) -> str: ...


# --- COPY TO STDOUT ------------------------------------------------------------

_QUERY_WORDS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE"})  # no DML (RETURNING)


def _is_query(sql: str) -> bool:
    words = sql.lstrip("( \t\r\n").split(None, 1)
    return bool(words) and words[0].upper() in _QUERY_WORDS


_TEXT_ESCAPES = {"\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_TEXT_ESCAPES |= {"\t": "\\t", "\v": "\\v"}


def _text_escape(value: str, sep: str = "\t") -> str:
    """COPY text escapes, as PostgreSQL's CopyAttributeOutText writes them."""
    out = "".join(_TEXT_ESCAPES.get(ch, ch) for ch in value)
    if sep not in _TEXT_ESCAPES:
        out = out.replace(sep, "\\" + sep)
    return out


def _csv_field(value: str, opts: CopyOptions) -> str:
    """A CSV value quoted as Postgres does: a value equal to the NULL string (e.g. the
    empty string) is quoted so that it reads back as a value, not as NULL."""
    q = opts.quote
    if value == opts.null_string or any(c in value for c in (opts.sep, q, "\n", "\r")):
        esc = opts.escape or q
        if esc != q:
            value = value.replace(esc, esc + esc)
        return q + value.replace(q, esc + q) + q
    return value


async def copy_out(
    runner: StatementRunner,
    session: ClientSession,
    query: str,
    opts: CopyOptions,
    json_outputs: tuple[bool, ...] | None = None,
    table: str | None = None,
) -> None:
    """json_outputs: which columns PostgreSQL types json; other JSON columns are jsonb, as
    in query results (binary jsonb values carry their version byte). table: COPY table
    TO's (pg_stat_progress_copy's relid); None for COPY (query) TO."""
    cur = runner.cursor

    def run() -> tuple[Column, ...]:
        catalog_snapshot.refresh(cur, query, autocommit=False)  # COPY (SELECT ... pg_class)
        chars = None if table is None else char_columns(cur, table)  # (before the query)
        cur.execute(query)
        # INTERVAL and nested columns as DuckDB's exact text, which their encoders read,
        # as in query results (Python's timedelta folds 24 hours into a day); the
        # columns keep their types. A query only: DML must not run twice.
        cols = columns_of(cur.description) or ()
        if needs_cast(cols) and _is_query(query):
            cur.execute(lossless_sql(query, cols))
        return char_typed(cols, chars) if chars else cols

    columns = as_jsonb(await runner.call(run, sql=query), json_outputs)
    tz = runner.settings.values.get("TimeZone")
    binary = opts.format == "binary"
    session.out(m.copy_out_response(binary, len(columns)))
    sep, null = opts.sep, opts.null_string
    if opts.header and opts.format == "csv":
        session.out(m.copy_data((sep.join(c.name for c in columns) + "\n").encode()))
    plan = arrow_results.plans(columns, (1 if binary else 0,), tz)
    if plan is not None:
        # DuckDB's Arrow batches, framed a column at a time (wire/arrow_rows.py)
        reader = await runner.call(cur.to_arrow_reader, arrow_results.BATCH_ROWS)
        first = [True]

        def read() -> pa.RecordBatch | None:
            try:
                return reader.read_next_batch()
            except StopIteration:
                return None

        # Text and CSV: each batch read on the encoding thread, in turn. The server is
        # ahead of such a client (psycopg never waited for it, load 1-15), so reading
        # ahead gained nothing, and its thread hand-offs and GIL contention cost server
        # CPU per 1M lineitem rows (text 0.73 -> 0.69 s, CSV 0.79 -> 0.69 s, load 7).
        # A binary client spends least per row (0.55 s vs 0.70 s), so there the next
        # batch is read ahead, or the client waits (40 times per 1M rows without, 3 with).
        reads = ReadAhead(read) if binary else None

        def batch() -> tuple[bytes | memoryview, int]:
            rb = reads.next() if reads is not None else read()
            if rb is None:
                return b"", 0
            data = copy_rows(rb, plan, opts.format, sep, null, opts.quote, opts.escape, first[0])
            first[0] = first[0] and not rb.num_rows
            return data, rb.num_rows or -1
    else:
        reads = None
        styles = runner.settings.output_styles()
        encoders = [column_encoder(c, 1 if binary else 0, *styles) for c in columns]
        first_rows = [True]

        def batch() -> tuple[bytes | memoryview, int]:
            rows = cur.fetchmany(5000)
            return _rows_out(rows, encoders, opts, first_rows), len(rows)

    total = 0
    progress = session.activity.progress = CopyProgress("COPY TO", table)
    steps = Prefetch(runner, batch)
    try:
        while True:
            data, n = await steps.next()
            if n == -1:  # an empty Arrow batch: not the end
                continue
            if not n:
                break
            steps.ahead()  # the next batch is encoded while this one goes out
            total += n
            # the data without the messages' 5-byte heads (a message a row)
            progress.counts = (progress.counts[0] + len(data) - 5 * n, total)
            session.out(data)
            await session.flush_if_large()
    finally:
        steps.close()  # before the read it may be waiting for
        if reads is not None:
            reads.close()
        if plan is not None and total and not binary:
            # the last row's newline (wire/arrow_rows.copy_rows), also before an error
            session.out(LINE_END)
    if binary:  # the trailer; with no rows, the header goes in front of it (as PostgreSQL)
        head = b"" if total else BINARY_SIGNATURE
        session.out(m.copy_data(head + b"\xff\xff"))
    session.out(m.copy_done())
    session.out(m.command_complete(f"COPY {total}"))


def _rows_out(rows: list[tuple], encoders: list, opts: CopyOptions, first: list[bool]) -> bytes:
    """CopyData messages, one a row (clients such as psycopg's Copy.rows() parse each
    message as exactly one row), by the per-value encoders."""
    out: list[bytes] = []
    sep, null = opts.sep, opts.null_string
    if opts.format == "binary":
        for row in rows:
            cells = [struct.pack(">h", len(row))]
            for v, enc in zip(row, encoders, strict=True):
                if v is None:
                    cells.append(b"\xff\xff\xff\xff")
                else:
                    b = enc(v)
                    cells.append(struct.pack(">i", len(b)) + b)
            if first[0]:
                cells.insert(0, BINARY_SIGNATURE)
                first[0] = False
            out.append(m.copy_data(b"".join(cells)))
    elif opts.format == "csv":
        for row in rows:
            line = sep.join(
                null if v is None else _csv_field(enc(v).decode(), opts)
                for v, enc in zip(row, encoders, strict=True)
            )
            out.append(m.copy_data((line + "\n").encode()))
    else:
        for row in rows:
            line = sep.join(
                null if v is None else _text_escape(enc(v).decode(), sep)
                for v, enc in zip(row, encoders, strict=True)
            )
            out.append(m.copy_data((line + "\n").encode()))
    return b"".join(out)
