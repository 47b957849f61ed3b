"""Large results streamed from DuckDB's Arrow record batches, encoded a column at a time.

A SELECT whose every column has a vectorised encoder (`wire.arrow_cells.plan_for`) is read
through `to_arrow_reader` instead of `fetchmany`: DuckDB builds the batches in C++, and
`wire.arrow_rows` turns each into DataRow bytes without Python per row. A result of at
most `SMALL_ROWS` rows is turned into tuples at once and sent by the per-value encoders,
which cost less than the vectorised path's fixed overhead for a row or two. One batch
is sent while the next is encoded (`prefetch.py`), and the connection waits for its
socket between steps (`flush_if_large`), so memory stays bounded however long the result.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from proxy.pgserver.prefetch import ReadAhead
from proxy.pgserver.results import Column, padded_to, result_format
from proxy.wire.arrow_cells import Plan, plan_for
from proxy.wire.arrow_rows import data_rows

# Rows DuckDB puts in one Arrow batch, and encoded per worker hop. 8,192: a batch's
# int64 temporaries (64 KiB) stay under glibc's mmap threshold (128 KiB, fixed by
# core/native_memory.py), so they are not mapped, faulted in and unmapped each time
# (server CPU per 200k lineitem rows, binary COPY: 0.25-0.27 s vs 0.29-0.35 s at 16,384).
BATCH_ROWS = 8_192
SMALL_ROWS = 64
SMALL_RUNS = 2  # short results in a row before a statement is read with fetchmany
HISTORY = 256  # statements remembered per connection


def plans(columns: Sequence[Column], formats: Sequence[int], tz: str | None) -> list[Plan] | None:
    """Vectorised encoders for every column, or None when one needs the per-value path."""
    out = []
    for i, col in enumerate(columns):
        if padded_to(col) is not None:
            return None  # char(n): padded by the per-value encoder (results.encoders_for)
        plan = plan_for(col.duckdb_type, result_format(formats, i), tz)
        if plan is None:
            return None
        out.append(plan)
    return out


@dataclass
class ArrowResult:
    """A result pending on the cursor as an Arrow stream, read a batch at a time."""

    reader: pa.RecordBatchReader
    plans: list[Plan]
    pending: list[pa.RecordBatch] = field(default_factory=list)
    finished: bool = False  # the reader has nothing more
    ahead: ReadAhead[pa.RecordBatch] | None = None  # while every row is being sent

    @property
    def exhausted(self) -> bool:
        return self.finished and not self.pending

    def read(self) -> pa.RecordBatch | None:
        """DuckDB's next batch, None at the end."""
        try:
            return self.reader.read_next_batch()
        except StopIteration:
            return None

    def read_ahead(self) -> None:
        """Read each batch while the one before it is encoded (until `stop_reading_ahead`)."""
        if not self.finished:
            self.ahead = ReadAhead(self.read)

    def stop_reading_ahead(self) -> None:
        """Wait for the read in flight; its batch is kept for the next Execute."""
        ahead, self.ahead = self.ahead, None
        if ahead is not None:
            batch = ahead.close()
            if batch is not None and batch.num_rows:
                self.pending.append(batch)

    def _next(self, want: int) -> pa.RecordBatch | None:
        while not self.pending:
            if self.finished:
                return None
            batch = self.ahead.next() if self.ahead is not None else self.read()
            if batch is None:
                self.finished = True
                return None
            if batch.num_rows:
                self.pending.append(batch)
        batch = self.pending[0]
        if batch.num_rows <= want:
            self.pending.pop(0)
            return batch
        self.pending[0] = batch.slice(want)
        return batch.slice(0, want)

    def encode_next(self, want: int) -> tuple[bytes | memoryview, int]:
        """Up to `want` rows as DataRow messages (on a worker thread): (bytes, rows)."""
        batch = self._next(want)
        if batch is None:
            return b"", 0
        return data_rows(batch, self.plans), batch.num_rows

    def drain(self) -> None:
        """Read the rest into memory, so the cursor can run another statement."""
        if not self.finished:
            self.pending.extend(b for b in self.reader if b.num_rows)
            self.finished = True


def start(
    cur: duckdb.DuckDBPyConnection, plan: list[Plan]
) -> tuple[list[tuple] | None, ArrowResult | None]:
    """Open the pending result as an Arrow stream: a short result comes back as tuples
    (every row), a longer one as an ArrowResult holding its first batch."""
    reader = cur.to_arrow_reader(BATCH_ROWS)
    result = ArrowResult(reader, plan)
    first = result._next(BATCH_ROWS)
    if first is None:
        return [], None
    if first.num_rows <= SMALL_ROWS and _tuples_ok(first):
        second = result._next(BATCH_ROWS)
        if second is None:
            return list(zip(*(c.to_pylist() for c in first.columns), strict=True)), None
        result.pending.insert(0, second)
    result.pending.insert(0, first)
    return None, result


def _tuples_ok(batch: pa.RecordBatch) -> bool:
    """Arrow's Python values are the ones DuckDB's fetch gives for these columns (dates and
    timestamps inside Python's range, microsecond timestamps)."""
    for col in batch.columns:
        t = col.type
        if pa.types.is_timestamp(t) and t.unit != "us":  # type: ignore[attr-defined]
            return False
        if pa.types.is_date(t) or pa.types.is_timestamp(t):
            try:
                col.to_pylist()
            except (ValueError, OverflowError):
                return False
    return True


class ResultSizes:
    """Which statements returned short results on their last runs, per connection.

    Opening an Arrow reader and reading its first batch costs more than the whole of a
    one-row result by `fetchmany` (~0.1-0.2 ms vs ~0.02 ms), so a statement whose last
    `SMALL_RUNS` results were short (a prepared point query) is read with `fetchmany`.
    The choice is made from the sizes the same statement returned, never from its text.
    A full first `fetchmany` ends it: the rest of that result goes by the per-value path
    (a reader opened now would skip the rest of DuckDB's current chunk) and the next run
    is read through Arrow again.
    """

    def __init__(self) -> None:
        self._short: OrderedDict[str, int] = OrderedDict()  # sql -> short runs in a row

    def short(self, sql: str) -> bool:
        return self._short.get(sql, 0) >= SMALL_RUNS

    def seen(self, sql: str, rows: int | None) -> None:
        """Record a run's row count (None: more than the first batch)."""
        if rows is None or rows >= SMALL_ROWS:
            self._short.pop(sql, None)
            return
        self._short[sql] = min(self._short.get(sql, 0) + 1, SMALL_RUNS)
        self._short.move_to_end(sql)
        if len(self._short) > HISTORY:
            self._short.popitem(last=False)
