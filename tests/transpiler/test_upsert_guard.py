"""transpiler/upsert_guard.py: a multi-row upsert's rows that share a conflict key get
PostgreSQL's outcome in the statement DuckDB runs (checked on DuckDB itself)."""

from __future__ import annotations

import duckdb
import pytest

from transpiler import transpile
from transpiler.column_hints import ColumnHints
from transpiler.errors import TranspileError

HINTS = ColumnHints(
    {"t": {"id": "int", "u": "int", "v": "text"}},
    order={"t": ["id", "u", "v"]},
    primary_keys={"t": ["id"]},
    unique={"t": [["id"], ["u"]]},
)


@pytest.fixture
def db() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id int PRIMARY KEY, u int UNIQUE, v text)")
    con.execute("INSERT INTO t VALUES (1, 10, 'a')")
    return con


def run(db: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return db.execute(transpile(sql, hints=HINTS)[0].sql).fetchall()


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1, 10, 'a') ON CONFLICT (id) DO NOTHING",
        "INSERT INTO t (id, v) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v",
        "INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b')",
    ],
)
def test_one_row_or_no_conflict_clause_is_left_as_written(sql: str) -> None:
    assert "__hati" not in transpile(sql, hints=HINTS)[0].sql


def test_do_nothing_keeps_the_first_row_of_a_key(db: duckdb.DuckDBPyConnection) -> None:
    run(
        db,
        "INSERT INTO t VALUES (2, 20, 'b'), (2, 21, 'c'), (1, 11, 'd') ON CONFLICT (id) DO NOTHING",
    )
    run(
        db,
        "INSERT INTO t (v, id, u) SELECT 'g', k, g FROM (VALUES (5, 30), (6, 31), (5, 32), (6, 33)) r(k, g) ON CONFLICT (id) DO NOTHING",
    )
    assert db.execute("SELECT * FROM t ORDER BY id").fetchall() == [
        (1, 10, "a"),
        (2, 20, "b"),
        (5, 30, "g"),
        (6, 31, "g"),
    ]


def test_do_update_with_a_repeated_key_raises(db: duckdb.DuckDBPyConnection) -> None:
    for sql in (
        "INSERT INTO t VALUES (3, 30, 'x'), (3, 31, 'y') ON CONFLICT (id) DO UPDATE SET v = 'z'",
        "INSERT INTO t SELECT * FROM (VALUES (3, 30, 'x'), (3, 31, 'y')) s ON CONFLICT (id) "
        "DO UPDATE SET v = 'z'",
    ):
        with pytest.raises(duckdb.InvalidInputException, match="cannot affect row a second"):
            run(db, sql)
    assert db.execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_several_null_keys_raise_rather_than_vanish(db: duckdb.DuckDBPyConnection) -> None:
    for target in ("(u)", ""):
        with pytest.raises(duckdb.InvalidInputException, match="NULL is not supported"):
            run(
                db,
                f"INSERT INTO t VALUES (3, NULL, 'x'), (4, NULL, 'y') ON CONFLICT {target} DO NOTHING",
            )
    run(
        db,
        "INSERT INTO t VALUES (3, NULL, 'x'), (4, 40, 'y') ON CONFLICT (u) DO UPDATE SET v = 'z'",
    )
    assert db.execute("SELECT count(*) FROM t").fetchone() == (3,)


def test_no_target_guards_every_unique_key(db: duckdb.DuckDBPyConnection) -> None:
    run(
        db,
        "INSERT INTO t VALUES (7, 70, 'p'), (8, 70, 'q'), (7, 71, 'r'), (9, 90, 's') ON CONFLICT DO NOTHING",
    )
    assert db.execute("SELECT id, u FROM t WHERE id > 1 ORDER BY id").fetchall() == [
        (7, 70),
        (9, 90),
    ]


def test_do_update_without_a_target_is_42601() -> None:
    with pytest.raises(TranspileError) as info:
        transpile(
            "INSERT INTO t VALUES (1, 10, 'a') ON CONFLICT DO UPDATE SET v = 'x'", hints=HINTS
        )
    assert info.value.sqlstate == "42601"


def test_on_constraint_by_its_default_name(db: duckdb.DuckDBPyConnection) -> None:
    run(
        db,
        "INSERT INTO t VALUES (1, 10, 'z') ON CONFLICT ON CONSTRAINT t_pkey DO UPDATE SET v = 'pk'",
    )
    run(
        db,
        "INSERT INTO t VALUES (2, 10, 'z') ON CONFLICT ON CONSTRAINT t_u_key DO UPDATE SET v = 'u'",
    )
    assert db.execute("SELECT * FROM t").fetchall() == [(1, 10, "u")]


def test_no_target_and_an_unlisted_unique_column_without_a_sequence() -> None:
    """Its value is its default in every row (NULL): DuckDB would keep one row of them."""
    hints = ColumnHints(
        {"s": {"id": "int", "email": "text", "nick": "text"}},
        order={"s": ["id", "email", "nick"]},
        primary_keys={"s": ["id"]},
        unique={"s": [["id"], ["email"], ["nick"]]},
        drawn={"s": ["id"]},
    )
    con = duckdb.connect()
    con.execute("CREATE SEQUENCE q")
    con.execute(
        "CREATE TABLE s (id int DEFAULT nextval('q') PRIMARY KEY, email text UNIQUE, nick text UNIQUE)"
    )
    several = "INSERT INTO s (email) VALUES ('a'), ('b'), ('a') ON CONFLICT DO NOTHING"
    with pytest.raises(duckdb.InvalidInputException, match="NULL is not supported"):
        con.execute(transpile(several, hints=hints)[0].sql)
    one = "INSERT INTO s (email, nick) VALUES ('a', 'x'), ('b', 'y'), ('a', 'z') ON CONFLICT DO NOTHING"
    con.execute(transpile(one, hints=hints)[0].sql)
    assert con.execute("SELECT email, nick FROM s ORDER BY email").fetchall() == [
        ("a", "x"),
        ("b", "y"),
    ]


def test_no_target_and_a_partial_unique_index() -> None:
    """The index's keys (create_index.py's CASE WHEN <where> THEN col END) are compared as
    DuckDB would: rows outside the WHERE have a NULL key there, several of them 0A000."""
    hints = ColumnHints(
        {"p": {"id": "int", "k": "text", "live": "other"}},
        order={"p": ["id", "k", "live"]},
        primary_keys={"p": ["id"]},
        unique={"p": [["id"], ["(CASE  WHEN (live) THEN (k) ELSE NULL END)"]]},
    )
    con = duckdb.connect()
    con.execute("CREATE TABLE p (id int PRIMARY KEY, k text, live bool)")
    con.execute("CREATE UNIQUE INDEX p_k ON p ((CASE WHEN live THEN k END))")
    sql = "INSERT INTO p VALUES (1, 'a', true), (2, 'a', true), (3, 'b', false) ON CONFLICT DO NOTHING"
    con.execute(transpile(sql, hints=hints)[0].sql)
    assert con.execute("SELECT id FROM p ORDER BY id").fetchall() == [(1,), (3,)]
    outside = "INSERT INTO p VALUES (4, 'c', false), (5, 'c', false) ON CONFLICT DO NOTHING"
    with pytest.raises(duckdb.InvalidInputException, match="NULL is not supported"):
        con.execute(transpile(outside, hints=hints)[0].sql)
