"""Result columns read plainly from a table's columns carry the declared type's OID and
typmod in RowDescription, as PostgreSQL 15 sends them (proxy/pgserver/column_origins.py):
varchar(n) is 1043 / n + 4, as is a cast to varchar(n) (a cast to char(n): bpchar 1042 /
n + 4, padded to n) (DuckDB keeps it as VARCHAR), numeric(p,s) 1700 /
((p << 16) | s) + 4, timestamp(3) / timestamp(0) 1114 / p; an expression over a varchar(n)
column is text. psycopg's `cursor.description` (type_code, internal_size, precision,
scale, display_size) is compared with PostgreSQL's, in text and binary format."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess
from tests.differential.pgcluster import start_pg

TABLE = "dt_typmods"
SETUP = (
    f"CREATE TABLE {TABLE} (id int PRIMARY KEY, vc varchar(5), vc40 character varying(40), "
    "n numeric(7,2), ts timestamp(3), ts0 timestamp(0), t text, i int, b boolean)",
    f"INSERT INTO {TABLE} VALUES (1, 'abc', 'x', 12.5, '2020-01-01 12:00:00.123', "
    "'2020-01-01 12:00:01', 'text', 7, true)",
)
QUERIES = (
    f"SELECT * FROM {TABLE}",
    f"SELECT d.vc AS v, d.n, d.vc40 FROM {TABLE} d",
    f"SELECT x.vc FROM (SELECT vc FROM {TABLE}) x",
    f"SELECT upper(vc), vc || 'x', vc::text, length(vc) FROM {TABLE}",
    f"SELECT a.vc, b.vc40 FROM {TABLE} a JOIN {TABLE} b ON a.id = b.id",
    # a cast to varchar(n) is 1043 / n + 4, to varchar 1043 / -1 (transpiler/cast_types.py)
    f"SELECT t::varchar(5) AS c5, CAST(vc40 AS character varying(3)), t::varchar, "
    f"t::text, upper(t::varchar(2)) FROM {TABLE}",
    "SELECT 'abcdef'::varchar(3) AS a, 'q'::character varying",
    # a cast to char(n) is bpchar 1042 / n + 4, padded to n
    f"SELECT t::char(6) AS c6, 'ab'::character(4), 'x'::char, t::char(2) || 'y' FROM {TABLE}",
)
RETURNING = (
    f"UPDATE {TABLE} SET vc = 'de' WHERE id = 1 RETURNING vc, n, id",
    f"INSERT INTO {TABLE} (id, vc) VALUES (2, 'q') RETURNING *",
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
                        (d.name, d.type_code, d.internal_size, d.precision, d.scale, d.display_size)
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
    assert ("vc", 1043, None, None, None, 5) in postgres_described[0]  # type: ignore[operator]
    assert ("n", 1700, None, 7, 2, None) in postgres_described[0]  # type: ignore[operator]
    assert ("c5", 1043, None, None, None, 5) in postgres_described[15]  # type: ignore[operator]
    assert ("c6", 1042, None, None, None, 6) in postgres_described[21]  # type: ignore[operator]
    assert postgres_described[23] == [("text  ", "ab  ", "x", "tey")]
    for i, (a, b) in enumerate(zip(ours, postgres_described, strict=True)):
        assert a == b, f"item {i}"


def test_copy_from_too_long_is_22001(server: ServerProcess) -> None:
    """COPY FROM checks varchar(n) as INSERT does (PostgreSQL: 22001, nothing copied)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE dt_copy_len (id int, vc varchar(3))")
        with (
            pytest.raises(psycopg.errors.StringDataRightTruncation) as info,
            conn.cursor().copy("COPY dt_copy_len FROM STDIN") as cp,
        ):
            cp.write("1\tabc\n2\tabcd\n")
        assert "value too long for type character varying(3)" in str(info.value)
        assert conn.execute("SELECT count(*) FROM dt_copy_len").fetchone() == (0,)
        with conn.cursor().copy("COPY dt_copy_len FROM STDIN") as cp:
            cp.write("1\tabc\n2\tééé\n")
        cur = conn.execute("SELECT vc FROM dt_copy_len ORDER BY id")
        assert cur.description is not None and cur.description[0].type_code == 1043
        assert cur.fetchall() == [("abc",), ("ééé",)]
