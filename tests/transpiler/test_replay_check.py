"""transpiler.replay: which recorded writes ROLLBACK TO SAVEPOINT may replay exactly.

A wrong "safe" would silently change data after a ROLLBACK TO, so the volatile list is
checked against DuckDB's own stability flags, and views, macros and column defaults
against a real DuckDB catalog (proxy.pgserver.savepoint_replay.DuckDBCatalog).
"""

from __future__ import annotations

import duckdb
import pytest

from proxy.pgserver.savepoint_replay import DuckDBCatalog
from transpiler.replay import FunctionInfo, replay_refusal


class KnowsEverything:
    """Every function known and consistent: only the static rules can refuse."""

    def function(self, name: str) -> FunctionInfo:
        return FunctionInfo(frozenset({"scalar"}), volatile=False)

    def view(self, schema: str | None, name: str) -> None:
        return None

    def defaults(self, schema: str | None, table: str) -> tuple[tuple[str, str], ...]:
        return ()


def _volatile_duckdb_functions() -> list[str]:
    con = duckdb.connect()
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions()"
        " WHERE function_type = 'scalar' AND stability <> 'CONSISTENT' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("name", _volatile_duckdb_functions())
def test_every_function_duckdb_calls_volatile_is_refused(name: str) -> None:
    """Also after a DuckDB upgrade: a new volatile function fails this test, not a replay."""
    why = replay_refusal(f"INSERT INTO t VALUES ({name}())", KnowsEverything())
    assert why is not None and "new value each time" in why


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES ($1, $2)",
        "INSERT INTO t (a, b) VALUES (1, upper('x')) ON CONFLICT DO NOTHING RETURNING *",
        "INSERT OR REPLACE INTO t VALUES (1, 'x')",
        "UPDATE t SET b = $1 WHERE a = $2",
        "DELETE FROM t WHERE a IN (SELECT a FROM u WHERE b IS NULL)",
        "DELETE FROM t USING u WHERE t.a = u.a",
        "MERGE INTO t USING (SELECT $1 AS a, $2 AS b) s ON t.a = s.a"
        " WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT VALUES (s.a, s.b)",
        "INSERT INTO t VALUES (1, 'a'), (2, 'b') ON CONFLICT (a) DO UPDATE SET b = excluded.b",
        "INSERT INTO t SELECT $1, $2 ON CONFLICT DO NOTHING",
        "WITH q AS (SELECT 5 AS a) INSERT INTO t SELECT a, 'q' FROM q",
        "INSERT INTO t SELECT max(a) + 1, min(b) FROM t",
        "INSERT INTO t SELECT count(*), 'n' FROM u GROUP BY b",
        "INSERT INTO t SELECT i, i::VARCHAR FROM range(3) r(i)",
        "TRUNCATE t",
    ],
)
def test_deterministic_writes_are_replayable(sql: str) -> None:
    assert replay_refusal(sql, KnowsEverything()) is None


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("INSERT INTO t SELECT a, b FROM u LIMIT 1", "LIMIT"),
        ("DELETE FROM t WHERE a IN (SELECT a FROM u ORDER BY a OFFSET 2)", "OFFSET"),
        ("INSERT INTO t SELECT a, b FROM u USING SAMPLE 10%", "sample"),
        ("INSERT INTO t SELECT DISTINCT ON (a) a, b FROM u", "DISTINCT ON"),
        ("INSERT INTO t SELECT row_number() OVER (), b FROM u", "window"),
        ("INSERT INTO t SELECT 1, string_agg(b, ',') FROM u", "aggregate"),
        ("INSERT INTO t SELECT sum(a), 'x' FROM u", "aggregate"),
        ("UPDATE t SET b = 'z' WHERE rowid = 3", "rowid"),
        ("UPDATE t SET b = u.b FROM u WHERE t.a = u.a", "UPDATE ... FROM"),
        ("MERGE INTO t USING u ON t.a = u.a WHEN MATCHED THEN DELETE", "MERGE"),
        ("INSERT INTO t SELECT a, b FROM u ON CONFLICT DO NOTHING", "ON CONFLICT"),
        ("INSERT OR REPLACE INTO t SELECT a, b FROM u", "ON CONFLICT"),
        ("INSERT INTO t SELECT * FROM read_csv('/tmp/x.csv')", "table function"),
        ("INSERT INTO t VALUES (1, CAST(CURRENT_TIMESTAMP AS VARCHAR))", "new value"),
        ("INSERT INTO t VALUES (1, COALESCE(GETVARIABLE('pg:x'), 'a'))", "new value"),
        ("INSERT INTO t VALUES (1, __HATI_EMBED__('x'))", "new value"),
        ("CREATE TABLE x (a INT)", "DDL"),
        ("SELECT 1", "INSERT, UPDATE, DELETE or MERGE"),
        ("EXPLAIN ANALYZE INSERT INTO t VALUES (1)", "cannot parse"),
    ],
)
def test_writes_that_could_differ_are_refused(sql: str, why: str) -> None:
    refusal = replay_refusal(sql, KnowsEverything())
    assert refusal is not None and why in refusal


def test_catalog_views_macros_and_column_defaults_are_checked() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE SEQUENCE s; CREATE TABLE w (a INT PRIMARY KEY, b VARCHAR DEFAULT 'x');"
        "CREATE TABLE seq_t (id INT DEFAULT nextval('s'), b VARCHAR);"
        "CREATE TABLE ts_t (a INT, stamp TIMESTAMP DEFAULT current_timestamp);"
        "CREATE VIEW v_rand AS SELECT random() AS r; CREATE VIEW v_ok AS SELECT a FROM w;"
        "CREATE MACRO plus1(a) AS a + 1; CREATE MACRO noisy(a) AS a + random();"
        "CREATE MACRO rows_of(n) AS TABLE SELECT * FROM range(n)"
    )
    cat = DuckDBCatalog(con)

    def why(sql: str) -> str | None:
        return replay_refusal(sql, cat)

    assert why("INSERT INTO w (a) VALUES (1)") is None  # a constant default
    assert why("DELETE FROM w WHERE a IN (SELECT a FROM v_ok)") is None
    assert why("INSERT INTO w VALUES (plus1(1), 'a')") is None
    assert why("INSERT INTO w SELECT range, 'r' FROM rows_of(3)") is None
    assert "nextval" in (why("INSERT INTO seq_t (b) VALUES ('a')") or "")
    assert why("INSERT INTO seq_t (id, b) VALUES (7, 'a')") is None  # its default never runs
    assert "current_timestamp" in (why("INSERT INTO ts_t (a) VALUES (1)") or "")
    # an UPDATE runs a default only where it sets DEFAULT (postgres.js's and Kysely's
    # savepoints after an UPDATE of a table with a serial key)
    assert why("UPDATE seq_t SET b = 'c' WHERE b = 'a'") is None
    assert "nextval" in (why("UPDATE seq_t SET id = DEFAULT, b = 'c'") or "")
    assert why('UPDATE seq_t SET b = "DEFAULT"') is None  # a column named so
    assert "view v_rand" in (why("INSERT INTO w SELECT r::INT, 'x' FROM v_rand") or "")
    assert "noisy()" in (why("INSERT INTO w VALUES (noisy(1), 'a')") or "")
    assert "does not know" in (why("INSERT INTO w VALUES (no_such_fn(1), 'a')") or "")
    table_fn = why("INSERT INTO w SELECT 1, table_name FROM duckdb_tables()") or ""
    assert "table function duckdb_tables()" in table_fn
