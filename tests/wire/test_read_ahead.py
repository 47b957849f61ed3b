"""DuckDB's next Arrow batch read on a helper thread while this one is encoded
(pgserver/prefetch.py ReadAhead): every batch arrives once, in order, and none is lost
when the stream stops early."""

from __future__ import annotations

import threading

import duckdb
import pytest

from proxy.pgserver import arrow_results
from proxy.pgserver.prefetch import ReadAhead
from proxy.pgserver.results import columns_of


def _source(n: int, fail_at: int | None = None):
    items = iter(range(n))
    threads: list[int] = []

    def read() -> int | None:
        threads.append(threading.get_ident())
        item = next(items, None)
        if item is not None and item == fail_at:
            raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
        return item

    return read, threads


def test_batches_arrive_in_order_read_on_another_thread() -> None:
    read, threads = _source(5)
    reads = ReadAhead(read)
    got = []
    while (item := reads.next()) is not None:
        got.append(item)
    assert got == [0, 1, 2, 3, 4]
    assert reads.next() is None
    assert threads[0] == threading.get_ident()  # the first read: nothing was ahead yet
    assert set(threads[1:]) and threading.get_ident() not in threads[1:]


def test_close_returns_the_batch_read_ahead() -> None:
    read, _ = _source(5)
    reads = ReadAhead(read)
    assert reads.next() == 0
    assert reads.close() == 1  # already read: the caller keeps it
    assert reads.close() is None


def test_a_failed_read_reaches_the_encoding_step() -> None:
    read, _ = _source(5, fail_at=2)
    reads = ReadAhead(read)
    assert reads.next() == 0
    assert reads.next() == 1
    with pytest.raises(duckdb.InterruptException):
        reads.next()


def test_arrow_result_keeps_the_batch_read_ahead_when_sending_stops() -> None:
    con = duckdb.connect()
    cur = con.cursor()
    cur.execute("SELECT i, i::VARCHAR AS s FROM range(50000) t(i)")
    plan = arrow_results.plans(columns_of(cur.description) or (), (0,), "UTC")
    assert plan is not None
    head, stream = arrow_results.start(cur, plan)
    assert head is None and stream is not None
    stream.read_ahead()
    _, first = stream.encode_next(arrow_results.BATCH_ROWS)
    _, second = stream.encode_next(arrow_results.BATCH_ROWS)
    stream.stop_reading_ahead()  # a batch was in flight: it goes to pending
    stream.drain()
    rest = sum(b.num_rows for b in stream.pending)
    assert first + second + rest == 50000
