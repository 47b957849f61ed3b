"""`in_values` (proxy/core/sqltext.py): a short id list is a plain filter, not a hash join.

Why it matters: each hash join DuckDB runs leaves dead nodes in its buffer pool's eviction
queue, each keeping a destroyed block handle in the glibc heap until the queue is purged
(docs/memory.md). Deleting a memory ran three such joins (`IN (SELECT unnest(?))`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid

import duckdb
import pytest

from proxy.core.sqltext import MAX_INLINE_IN, in_values


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id UUID PRIMARY KEY, n INT)")
    con.execute("INSERT INTO t SELECT uuid(), i FROM range(2000) r(i)")
    return con


@pytest.mark.parametrize("count", [0, 1, 2, MAX_INLINE_IN, MAX_INLINE_IN + 1, 40])
def test_selects_exactly_the_values(con: duckdb.DuckDBPyConnection, count: int) -> None:
    ids = [
        str(r[0]) for r in con.execute("SELECT id FROM t ORDER BY n LIMIT ?", [count]).fetchall()
    ]
    where, params = in_values("id", [*ids, str(uuid.uuid4())][:count], "UUID")
    got = con.execute(f"SELECT id::VARCHAR FROM t WHERE {where}", params).fetchall()
    assert sorted(r[0] for r in got) == sorted(ids[:count])


@pytest.mark.parametrize("count", range(1, MAX_INLINE_IN + 1))
def test_a_few_values_plan_no_join(con: duckdb.DuckDBPyConnection, count: int) -> None:
    where, params = in_values("id", [str(uuid.uuid4()) for _ in range(count)], "UUID")
    plan = str(con.execute(f"EXPLAIN DELETE FROM t WHERE {where}", params).fetchall())
    assert "JOIN" not in plan, plan


_DELETES = textwrap.dedent(
    """
    import ctypes, uuid, duckdb
    from proxy.core.sqltext import in_values

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id UUID PRIMARY KEY, n INT)")
    con.execute("INSERT INTO t SELECT uuid(), i FROM range(1000) r(i)")

    def run(n):
        for i in range(n):
            where, params = in_values("id", [str(uuid.uuid4())], "UUID")
            con.execute(f"DELETE FROM t WHERE {where}", params)

    run(2000)
    before = libc.mallinfo2().uordblks
    run(8000)
    print((libc.mallinfo2().uordblks - before) / 2**20)
    """
)


def test_deleting_one_id_at_a_time_keeps_the_heap_flat() -> None:
    """8,000 deletes by one id: with `IN (SELECT unnest(?))` the glibc heap in use grew
    2.0 MiB (DuckDB 1.5.5: dead eviction-queue nodes, a hash join each); as a filter,
    0.003 MiB."""
    out = subprocess.run(
        [sys.executable, "-c", _DELETES], capture_output=True, text=True, timeout=600, check=True
    )
    grown_mib = float(out.stdout.strip())
    assert grown_mib < 0.5, f"heap in use grew {grown_mib:.2f} MiB over 8,000 deletes"
