"""Results longer than several Arrow batches (pgserver/prefetch.py encodes the next batch
on a helper thread while one goes out): every row arrives once and in order, in every
format; an error raised while the rows are read reaches the client as an error; and the
connection runs its next statement normally afterwards."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal

import psycopg
import pytest

ROWS = 40_000  # several of arrow_results.BATCH_ROWS (8,192)


def _expected(g: int) -> tuple:
    return (
        g,
        None if g % 7 == 0 else f"r{g}\t{g % 3}",
        Decimal(g % 1000) / 100 - 5,
        dt.date(2000, 1, 1) + dt.timedelta(days=g % 3000),
    )


@pytest.fixture(scope="module")
def lines(server) -> str:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE streamed_rows AS SELECT g::integer AS id,"
            " CASE WHEN g % 7 = 0 THEN NULL ELSE 'r' || g || chr(9) || (g % 3) END AS s,"
            " ((g % 1000) / 100.0 - 5)::DECIMAL(12,2) AS n,"
            " DATE '2000-01-01' + (g % 3000)::integer AS d"
            f" FROM range({ROWS}) AS t(g)"
        )
    return "SELECT id, s, n, d FROM streamed_rows ORDER BY id"


@pytest.mark.parametrize("binary", [False, True])
def test_long_result_arrives_whole(server, lines: str, binary: bool) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        rows = conn.cursor(binary=binary).execute(lines).fetchall()
        assert rows == [_expected(g) for g in range(ROWS)]
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("fmt", ["text", "csv", "binary"])
def test_long_copy_out_arrives_whole(server, lines: str, fmt: str) -> None:
    expected = [_expected(g) for g in range(ROWS)]
    with psycopg.connect(server.dsn, autocommit=True) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY ({lines}) TO STDOUT (FORMAT {fmt})") as copy:
            if fmt == "csv":
                raw = b"".join(bytes(block) for block in copy).decode()
                rows = [tuple(r) for r in csv.reader(io.StringIO(raw))]
                expected = [
                    (str(i), "" if s is None else s, f"{n:.2f}", d.isoformat())
                    for i, s, n, d in expected
                ]
            else:
                copy.set_types(["int4", "text", "numeric", "date"])
                rows = list(copy.rows())
        assert cur.rowcount == ROWS
        assert rows == expected
        assert conn.execute("SELECT count(*) FROM streamed_rows").fetchone() == (ROWS,)


@pytest.mark.parametrize("copy", [None, "text", "csv", "binary"])
def test_error_in_a_later_batch_reaches_the_client(server, copy: str | None) -> None:
    """COPY text and CSV read each batch on the encoding thread, binary reads the next
    one ahead (copy_out.py): a failing read reaches the client either way."""
    query = (
        "SELECT CASE WHEN g = 35000 THEN error('boom at 35000') ELSE g END AS v"
        " FROM range(40000) AS t(g)"
    )
    with psycopg.connect(server.dsn, autocommit=True) as conn, conn.cursor() as cur:
        with pytest.raises(psycopg.Error, match="boom at 35000"):
            if copy:
                with cur.copy(f"COPY ({query}) TO STDOUT (FORMAT {copy})") as out:
                    for _ in out:
                        pass
            else:
                cur.execute(query).fetchall()
        assert conn.execute("SELECT 2").fetchone() == (2,)
