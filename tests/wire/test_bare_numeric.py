"""A column or cast of PostgreSQL's bare `numeric` keeps its decimals (transpiler/
numeric_type.py: DECIMAL(38,10); DuckDB's own bare DECIMAL(18,3) rounded them to 3), and
reads back as PostgreSQL's: type numeric with typmod -1, no padding zeros in text, binary
(dscale of the value) and COPY; beyond its 28 integer digits a write is 22003."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from tests.conftest import ServerProcess


def test_bare_numeric_round_trips_in_text_binary_and_copy(
    server: ServerProcess, table_name: str
) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int, x numeric, xs numeric[])")
        conn.execute(
            f"INSERT INTO {table_name} VALUES (1, 1.23456, ARRAY[1.5, 2]), (2, %s, NULL)",
            [Decimal("98765432109876543210.0123456789")],
        )
        sql = f"SELECT x, xs FROM {table_name} ORDER BY id"
        cur = conn.execute(sql)  # type: ignore[arg-type]
        assert [(d.type_code, d.internal_size) for d in cur.description][0] == (1700, None)
        assert cur.pgresult is not None and cur.pgresult.fmod(0) == -1  # numeric, no typmod
        rows = cur.fetchall()
        assert [str(r[0]) for r in rows] == ["1.23456", "98765432109876543210.0123456789"]
        assert [str(v) for v in rows[0][1]] == ["1.5", "2"]
        binary = conn.cursor(binary=True).execute(sql).fetchall()  # type: ignore[arg-type]
        assert [str(r[0]) for r in binary] == ["1.23456", "98765432109876543210.0123456789"]
        with conn.cursor().copy(f"COPY (SELECT x FROM {table_name} ORDER BY id) TO STDOUT") as cp:
            text = b"".join(bytes(b) for b in cp).decode()
        assert text == "1.23456\n98765432109876543210.0123456789\n"
        assert conn.execute("SELECT pg_typeof(x) FROM " + table_name).fetchone() == ("numeric",)  # type: ignore[operator]


def test_bare_numeric_overflow_is_22003(server: ServerProcess, table_name: str) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (x numeric)")
        with pytest.raises(psycopg.errors.NumericValueOutOfRange):
            conn.execute(f"INSERT INTO {table_name} VALUES (1e30)")  # type: ignore[arg-type]
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)  # type: ignore[arg-type]
