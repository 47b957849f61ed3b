"""transpiler/division.py: PostgreSQL's `/` and `%` become the catalog's division macros,
run here on DuckDB with the catalog installed (the macros' behaviour is PostgreSQL's:
tests/differential/cases/division.sql checks it against PostgreSQL 15)."""

from __future__ import annotations

import duckdb
import pytest

from proxy.db.catalog.install import install
from transpiler import transpile
from transpiler.model import Statement
from transpiler.params import infer_param_types


def sql(text: str, dialect: str = "postgres") -> str:
    return transpile(text, dialect=dialect)[0].sql


@pytest.fixture(scope="module")
def conn() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    install(c)
    c.execute("CREATE TABLE t (a INTEGER, b BIGINT, d INTERVAL)")
    c.execute("INSERT INTO t VALUES (7, 2, INTERVAL 1 HOUR), (-7, 2, INTERVAL 3 HOUR)")
    c.execute("CREATE SEQUENCE s START 1")
    return c


def run(conn: duckdb.DuckDBPyConnection, text: str) -> list[tuple]:
    return conn.execute(sql(text)).fetchall()


def test_division_and_modulo_become_the_macros() -> None:
    out = sql("SELECT a / b, a % b, mod(a, b) FROM t")
    assert "__hati_catalog.pg.__hati_div(a, b)" in out
    assert out.count("__hati_catalog.pg.__hati_mod(a, b)") == 2
    assert " / " not in out


def test_snowflake_division_stays_float_division() -> None:
    assert sql("SELECT a / b FROM t", dialect="snowflake") == "SELECT a / b FROM t"


def test_results_are_postgres(conn: duckdb.DuckDBPyConnection) -> None:
    assert run(conn, "SELECT 7 / 2, -7 / 2, 7 % -2, -7 % 2, 7.5 / 2") == [(3, -3, 1, -1, 3.75)]
    assert run(conn, "SELECT a / b, a % b FROM t ORDER BY a") == [(-3, -1), (3, 1)]
    assert run(conn, "SELECT NULL::int / 0, NULL::int % 0") == [(None, None)]


@pytest.mark.parametrize("text", ["SELECT 1 / 0", "SELECT 1.0 / 0", "SELECT 5 % 0"])
def test_zero_divisor_raises(conn: duckdb.DuckDBPyConnection, text: str) -> None:
    with pytest.raises(duckdb.InvalidInputException, match="division by zero"):
        run(conn, text)


def test_interval_divides(conn: duckdb.DuckDBPyConnection) -> None:
    got = run(conn, "SELECT d / 2, d / a FROM t WHERE a = 7")
    assert [(str(x), str(y)) for x, y in got] == [("0:30:00", "0:08:34.285714")]


def test_aggregate_operands_take_the_untyped_macro(conn: duckdb.DuckDBPyConnection) -> None:
    assert "__hati_idiv(MAX(a), COUNT(*))" in sql("SELECT max(a) / count(*) FROM t")
    assert run(conn, "SELECT max(a) / count(*), sum(a) / 2, max(a) % count(*) FROM t") == [
        (3, 0, 1)
    ]


def test_a_volatile_divisor_is_evaluated_once(conn: duckdb.DuckDBPyConnection) -> None:
    assert "__hati_div_once" in sql("SELECT 10 / nextval('s')")
    assert run(conn, "SELECT 10 / nextval('s'), currval('s')") == [(10, 1)]
    assert run(conn, "SELECT 10 / (SELECT max(b) FROM t)") == [(5,)]


def test_parameter_of_a_division_takes_the_column_type() -> None:
    st: Statement = transpile("SELECT a / $1, $2 % b FROM t")[0]
    types = {"a": "INTEGER", "b": "BIGINT"}
    found = infer_param_types(st, lambda _s, _t, column: types.get(column))
    assert found == {1: "INTEGER", 2: "BIGINT"}


def test_table_ddl_takes_the_untyped_macro_and_an_index_key_truncates() -> None:
    ddl = sql("CREATE TABLE x (a int, b int CHECK (a / b > 0), c int DEFAULT 7 / 2)")
    assert ddl.count("__hati_idiv(") == 2 and "__hati_div(" not in ddl
    # error() is a side effect DuckDB refuses in an index key
    assert sql("CREATE INDEX i ON x ((a / b))") == "CREATE INDEX i ON x((a // b))"


def test_stored_divisions_read_back_as_postgres_operators() -> None:
    """pg_get_viewdef / pg_get_expr / pg_get_constraintdef show DuckDB's stored text with the
    macros turned back into `/` and `%`, nested, around strings holding ',' and ')'."""
    from transpiler.division import as_postgres

    stored = (
        'SELECT id, "name", __hati_catalog.pg.__hati_div(stock, 2) AS half, '
        "__hati_catalog.pg.__hati_idiv(sum(a), __hati_catalog.pg.__hati_mod_once(b, "
        "(SELECT max(x) FROM t WHERE y = 'a,)''b'))) FROM items"
    )
    assert as_postgres(stored) == (
        'SELECT id, "name", (stock / 2) AS half, '
        "(sum(a) / (b % (SELECT max(x) FROM t WHERE y = 'a,)''b'))) FROM items"
    )
    assert as_postgres("__hati_catalog.pg.__hati_div(a") == "__hati_catalog.pg.__hati_div(a"
    assert as_postgres("SELECT a // b") == "SELECT a // b"
    # What it gives back is rewritten to the same macros again: a dump restores as it was.
    (st,) = transpile("SELECT a / b, a % b FROM t")
    again = transpile(as_postgres(st.sql))[0].sql
    assert "__hati_div(a, b)" in again and "__hati_mod(a, b)" in again and "/" not in again
