"""PostgreSQL's division over the wire (transpiler/division.py): int / int truncates, a
zero divisor is ERROR 22012 "division by zero" for every type, on the simple and the
extended protocol, with parameters, in views read from other connections and after a
restart (the view's stored text calls the catalog macros)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from tests.conftest import start_server


@pytest.mark.parametrize("prepare", [False, True])
@pytest.mark.parametrize(
    "sql", ["SELECT 1 / 0", "SELECT 1.0 / 0", "SELECT 1::float8 / 0", "SELECT 5 % 0"]
)
def test_zero_divisor_is_22012(server, sql: str, prepare: bool) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero) as err:
            conn.execute(sql, prepare=prepare)
        assert err.value.sqlstate == "22012"
        assert err.value.diag.message_primary == "division by zero"
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("prepare", [False, True])
def test_parameters_divide_as_postgres(server, table_name: str, prepare: bool) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (a int8, b int2)")
        conn.execute(f"INSERT INTO {table_name} VALUES (-7, 2), (9, 0)")
        # psycopg sends Python ints typed (int2/int4/int8), binary or text
        for _ in range(3):  # a prepared (and kept) statement, run again
            assert conn.execute("SELECT %s / %s", (7, 2), prepare=prepare).fetchone() == (3,)
            assert conn.execute("SELECT %s %% %s", (-7, 2), prepare=prepare).fetchone() == (-1,)
            got = conn.execute(
                f"SELECT a / %s FROM {table_name} WHERE b <> 0", (2,), prepare=prepare
            ).fetchone()
            assert got == (-3,)
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute(f"SELECT a / %s FROM {table_name}", (0,), prepare=prepare)
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute(f"SELECT a / b FROM {table_name}", prepare=prepare)
        assert conn.execute("SELECT %s::int / NULL::int", (1,)).fetchone() == (None,)


def test_division_by_zero_fails_the_transaction_block(server) -> None:
    with psycopg.connect(server.dsn) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 10 / 0")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()


def test_interval_and_float_divisions_keep_their_types(server) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT interval '1 hour' / 2, 'Infinity'::float8 / 2, 7.5::float8 / 2, 10 / 4.0::float8"
        ).fetchone()
        assert row is not None
        assert str(row[0]) == "0:30:00"
        assert row[1:] == (float("inf"), 3.75, 2.5)


def test_a_view_divides_the_same_from_another_connection_and_after_restart(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "div.duckdb")
    srv = start_server(tmp_path / "one", "--database", db)
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE d (a int, b int)")
            conn.execute("INSERT INTO d VALUES (7, 2), (-7, 2), (1, 0)")
            conn.execute("CREATE VIEW v AS SELECT a / b AS q, a % b AS r FROM d WHERE b <> 0")
            conn.execute("CREATE VIEW z AS SELECT a / b AS q FROM d")
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            assert conn.execute("SELECT * FROM v ORDER BY q").fetchall() == [(-3, -1), (3, 1)]
    finally:
        srv.stop()
    srv = start_server(tmp_path / "two", "--database", db)
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            assert conn.execute("SELECT * FROM v ORDER BY q").fetchall() == [(-3, -1), (3, 1)]
            with pytest.raises(psycopg.errors.DivisionByZero):
                conn.execute("SELECT * FROM z")
    finally:
        srv.stop()


def test_check_default_and_generated_columns_divide(server, table_name: str) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {table_name} (a int, b int CHECK (a / b > 0), "
            "c int DEFAULT 7 / 2, CONSTRAINT even CHECK (a % 2 = 0))"
        )
        conn.execute(f"INSERT INTO {table_name} (a, b) VALUES (4, 3)")
        assert conn.execute(f"SELECT a, b, c FROM {table_name}").fetchall() == [(4, 3, 3)]
        with pytest.raises(psycopg.errors.CheckViolation):  # 4 / 5 is 0
            conn.execute(f"INSERT INTO {table_name} (a, b) VALUES (4, 5)")
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute(f"INSERT INTO {table_name} (a, b) VALUES (4, 0)")
        conn.execute(f"CREATE INDEX ON {table_name} ((a / b))")
        got = conn.execute(f"UPDATE {table_name} SET a = a / 2 * 3 RETURNING a, a % 4")
        assert got.fetchall() == [(6, 2)]


@pytest.mark.parametrize("prepare", [False, True])
def test_numeric_quotient_is_numeric_text_with_16_decimals(
    server, table_name: str, prepare: bool
) -> None:
    """What psycopg builds a Decimal from: PostgreSQL's text for these quotients, typed
    numeric in the RowDescription; a Decimal parameter divides as numeric too."""
    table_name = f"{table_name[:40]}_{int(prepare)}"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (amount numeric(12,2), qty int)")
        conn.execute(f"INSERT INTO {table_name} VALUES (1234.50, 100), (22.00, 7)")
        cur = conn.execute("SELECT 10.0 / 4, 22 / 7.0, %s / 2", (Decimal("7.5"),), prepare=prepare)
        assert [d.type_code for d in cur.description] == [1700, 1700, 1700]
        assert [str(v) for v in cur.fetchone() or ()] == [
            "2.5000000000000000",
            "3.1428571428571429",
            "3.7500000000000000",
        ]
        got = conn.execute(
            f"SELECT amount / qty FROM {table_name} ORDER BY amount", prepare=prepare
        ).fetchall()
        assert [str(v) for (v,) in got] == ["3.1428571428571429", "12.3450000000000000"]
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute(f"SELECT amount / (qty - qty) FROM {table_name}", prepare=prepare)


def test_float_overflow_and_underflow_are_22003(server) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql, word in [
            ("SELECT 1e308::float8 / 1e-308::float8", "overflow"),
            ("SELECT 1e-308::float8 / 1e308::float8", "underflow"),
        ]:
            with pytest.raises(psycopg.errors.NumericValueOutOfRange) as err:
                conn.execute(sql)
            assert err.value.diag.message_primary == f"value out of range: {word}"
        assert conn.execute("SELECT (-2147483648)::int4 % -1").fetchone() == (0,)
