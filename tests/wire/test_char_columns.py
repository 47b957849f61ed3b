"""char(n) / character(n) / char columns and unsized varchar columns, as PostgreSQL 15
describes and prints them: bpchar (1042) with typmod n + 4, values padded to n (and blanks
beyond n cut) in text and binary format; varchar (1043) with typmod -1
(transpiler/varchar_length.py keeps the declaration as a CHECK, column_origins.py reads
it back, results.encoders_for pads). psycopg's `cursor.description` and values are
compared with PostgreSQL's."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess
from tests.differential.pgcluster import start_pg

TABLE = "dt_chars"
SETUP = (
    f"CREATE TABLE {TABLE} (id int PRIMARY KEY, c char(4), ch character(2), one char, "
    "v varchar, cv character varying, t text)",
    f"INSERT INTO {TABLE} VALUES (1, 'ab', 'x', 'y', 'v', 'cv', 't'), "
    "(2, 'abcd', 'xy', NULL, '', NULL, NULL), (3, NULL, NULL, ' ', 'long', 'z', 'z')",
    f"CREATE VIEW {TABLE}_v AS SELECT c, v, t, one AS o, id FROM {TABLE}",
)
QUERIES = (
    f"SELECT * FROM {TABLE} ORDER BY id",
    f"SELECT d.c AS k, d.v, d.ch FROM {TABLE} d ORDER BY id",
    f"SELECT x.c, x.one FROM (SELECT c, one, id FROM {TABLE}) x ORDER BY x.id",
    f"SELECT upper(c), c || '|', length(c), v || 'x', c::text FROM {TABLE} ORDER BY id",
    f"SELECT a.c, b.cv FROM {TABLE} a JOIN {TABLE} b ON a.id = b.id ORDER BY a.id",
    # a view's columns over them: the same types (proxy/pgserver/view_types.py)
    f"SELECT * FROM {TABLE}_v ORDER BY id",
    f"SELECT s.o, s.c FROM (SELECT o, c, id FROM {TABLE}_v) s ORDER BY s.id",
)
RETURNING = (
    f"UPDATE {TABLE} SET c = 'q' WHERE id = 1 RETURNING c, v, id",
    f"INSERT INTO {TABLE} (id, c, v) VALUES (4, 'w', 'w') RETURNING *",
)


def _described(dsn: str) -> list[object]:
    out: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)  # type: ignore[arg-type]
        for binary in (False, True):
            for sql in QUERIES:
                cur = conn.cursor(binary=binary)
                cur.execute(sql)  # type: ignore[arg-type]
                assert cur.description is not None and cur.pgresult is not None
                out.append(
                    [
                        (d.name, d.type_code, d.internal_size, d.display_size)
                        for d in cur.description
                    ]
                )
                out.append([cur.pgresult.fmod(i) for i in range(cur.pgresult.nfields)])
                out.append(cur.fetchall())
        with conn.transaction(force_rollback=True):
            for sql in RETURNING:
                cur = conn.execute(sql)  # type: ignore[arg-type]
                assert cur.description is not None
                out.append([(d.name, d.type_code, d.display_size) for d in cur.description])
                out.append(cur.fetchall())
    return out


@pytest.fixture(scope="module")
def postgres_described() -> Iterator[list[object]]:
    pg = start_pg()
    try:
        yield _described(pg.dsn)
    finally:
        pg.stop()


def test_description_equals_postgres(
    server: ServerProcess, postgres_described: list[object]
) -> None:
    ours = _described(server.dsn)
    # what PostgreSQL 15 says (so a broken comparison cannot pass by agreeing on nothing)
    assert ("c", 1042, None, 4) in postgres_described[0]  # type: ignore[operator]
    assert ("v", 1043, None, None) in postgres_described[0]  # type: ignore[operator]
    assert postgres_described[1] == [-1, 8, 6, 5, -1, -1, -1]
    assert postgres_described[2][0] == (1, "ab  ", "x ", "y", "v", "cv", "t")  # type: ignore[index]
    for i, (a, b) in enumerate(zip(ours, postgres_described, strict=True)):
        assert a == b, f"item {i}"


def test_char_too_long_is_22001(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE dt_char_len (id int, c char(3))")
        with pytest.raises(psycopg.errors.StringDataRightTruncation) as info:
            conn.execute("INSERT INTO dt_char_len VALUES (1, 'abcd')")
        assert "value too long for type character(3)" in str(info.value)
        conn.execute("INSERT INTO dt_char_len VALUES (2, 'abc   ')")  # blanks beyond n: cut
        assert conn.execute("SELECT c FROM dt_char_len").fetchall() == [("abc",)]


@pytest.mark.parametrize("binary", [False, True])
def test_copy_from_cuts_trailing_blanks(server: ServerProcess, binary: bool) -> None:
    """A dump's char(n) values come padded; stored without the blanks, they compare and
    count as PostgreSQL's (= 'ab', length 2) and are padded again on output."""
    table = f"dt_char_copy_{int(binary)}"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (id int, c char(4), v varchar)")
        fmt = " (FORMAT binary)" if binary else ""
        with conn.cursor().copy(f"COPY {table} (id, c, v) FROM STDIN{fmt}") as cp:
            cp.set_types(["int4", "text", "text"])
            for row in ((1, "ab  ", "ab  "), (2, "abcd", "x"), (3, "abcd  ", None)):
                cp.write_row(row)
        cur = conn.execute(f"SELECT id, c, length(c), c = 'ab', v FROM {table} ORDER BY id")
        assert cur.fetchall() == [
            (1, "ab  ", 2, True, "ab  "),
            (2, "abcd", 4, False, "x"),
            (3, "abcd", 4, False, None),
        ]
        with (
            pytest.raises(psycopg.errors.StringDataRightTruncation),
            conn.cursor().copy(f"COPY {table} (id, c) FROM STDIN") as cp,
        ):
            cp.write("4\tabcde\n")


@pytest.mark.parametrize("binary", [False, True])
def test_large_result_padded(server: ServerProcess, binary: bool) -> None:
    """A result too long for the per-row path (read from Arrow batches otherwise) pads too."""
    table = f"dt_char_big_{int(binary)}"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (id int, c char(5))")
        conn.execute(
            f"INSERT INTO {table} SELECT i, CASE i % 2 WHEN 0 THEN 'ab' END FROM range(20000) r(i)"
        )
        for _ in range(3):  # a repeated statement too (its size remembered)
            rows = (
                conn.cursor(binary=binary).execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
            )
            assert len(rows) == 20000 and rows[0] == (0, "ab   ") and rows[1] == (1, None)
            assert {r[1] for r in rows} == {"ab   ", None}
