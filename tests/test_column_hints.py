"""proxy/semantic/column_hints.py (catalog -> ColumnHints, cached until the catalog changes) and
proxy/db/semantic_errors.py (DuckDB type errors of semantic SQL in the user's terms)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import duckdb
import pytest

from proxy.db.duckdb_errors import map_duckdb_error
from proxy.semantic import column_hints
from proxy.semantic.embedded_columns import REGISTRY
from proxy.wire.errors import PgError
from transpiler import ColumnHints, Statement, transpile


class FakeEngine:
    """What HintsCache uses of proxy.db.engine.Engine: cursor() and run()."""

    def __init__(self) -> None:
        self.db = duckdb.connect()
        self.cursors = 0
        self.worker_threads: set[int] = set()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        self.cursors += 1
        return self.db.cursor()

    async def run(self, fn: Callable[[], object]) -> object:
        def on_worker() -> object:
            self.worker_threads.add(threading.get_ident())
            return fn()

        return await asyncio.to_thread(on_worker)


def test_build_kinds_registry_and_schema_agreement() -> None:
    rows = [
        ("main", "docs", "id", "INTEGER"),
        ("main", "docs", "Content", "VARCHAR"),
        ("main", "docs", "content_embedding", "FLOAT[384]"),
        ("main", "items", "features", "FLOAT[]"),
        ("main", "items", "d", "DOUBLE[3]"),
        ("main", "items", "meta", "JSON"),
        # the same table name in another schema: only what both agree on is kept
        ("branch", "items", "features", "VARCHAR"),
        ("branch", "items", "d", "DOUBLE[3]"),
        ("branch", "items", "meta", "JSON"),
        ("main", "notes", "body", "VARCHAR"),
        ("branch", "notes", "body", "VARCHAR"),
        ("main", "notes", "body_embedding", "FLOAT[384]"),
    ]
    registered = [
        ("docs", "content", "content_embedding"),
        ("notes", "body", "body_embedding"),  # branch.notes lacks the vector column
        ("gone", "x", "x_embedding"),  # dropped table
    ]
    hints = column_hints.build(rows, registered)
    assert hints.columns("docs") == {
        "id": "int",
        "content": "text",
        "content_embedding": "vector",
    }
    assert hints.columns("items") == {"d": "vector", "meta": "json"}  # jsonb operators
    assert hints.embedding_column("docs", "content") == "content_embedding"
    assert hints.embedding_column("notes", "body") is None
    assert hints.columns("gone") is None
    # Declared order, original case, only where every schema's copy has the same columns.
    assert hints.column_order("docs") == ("id", "Content", "content_embedding")
    # The copies differ in a column's type, not in names or order: positions agree.
    assert hints.column_order("items") == ("features", "d", "meta")
    assert hints.column_order("notes") is None  # main has a column branch lacks
    same = column_hints.build(
        [("main", "t", "a", "INTEGER"), ("b1", "t", "A", "INTEGER"), ("main", "t", "b", "JSON")]
        + [("b1", "t", "b", "JSON")],
        [],
    )
    assert same.column_order("t") == ("a", "b")
    # Vector sizes, where every copy agrees (a distance parameter takes the column's).
    assert hints.vector_size("docs", "content_embedding") == 384
    assert hints.vector_size("items", "d") == 3
    assert hints.vector_size("items", "features") is None  # FLOAT[] and VARCHAR copies


def test_cache_builds_once_and_rebuilds_after_a_catalog_change() -> None:
    engine = FakeEngine()
    engine.db.execute("CREATE TABLE items (id INT, features FLOAT[3], content VARCHAR)")
    sql = "SELECT id FROM items ORDER BY semantic_rank(features, 'q') DESC LIMIT 1"
    assert column_hints.for_sql(engine, "SELECT 1") is None  # no semantic call: no hints
    first = column_hints.for_sql(engine, sql)
    assert first is not None and first.columns("items")["features"] == "vector"
    assert column_hints.for_sql(engine, sql) is first
    column_hints.catalog_changed(engine)  # nothing really changed: the same object
    assert column_hints.for_sql(engine, sql) is first
    engine.db.execute(
        f"CREATE TABLE {REGISTRY} (table_name VARCHAR, column_name VARCHAR, vector_column VARCHAR)"
    )
    engine.db.execute("ALTER TABLE items ADD COLUMN content_embedding FLOAT[3]")
    engine.db.execute(f"INSERT INTO {REGISTRY} VALUES ('items', 'content', 'content_embedding')")
    assert column_hints.for_sql(engine, sql) is first  # not told yet: no round trip
    column_hints.catalog_changed(engine)
    second = column_hints.for_sql(engine, sql)
    assert second is not first
    assert second.embedding_column("items", "content") == "content_embedding"
    assert engine.cursors == 1


class FakeRunner:
    """What column_hints uses of proxy.pgserver.runner.Runner: engine, txn_status,
    implicit, and its own cursor (take_cursor, call)."""

    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.txn_status = "T"
        self.implicit = False
        self.cursor = engine.db.cursor()

    async def take_cursor(self) -> None:
        return None

    async def call(self, fn: Callable[..., object], *args: object) -> object:
        return fn(*args)


def test_sessions_rebuild_on_a_worker_thread_never_on_the_loop() -> None:
    engine = FakeEngine()
    runner = FakeRunner(engine)
    engine.db.execute("CREATE TABLE items (id INT, features FLOAT[3])")
    sql = "SELECT id FROM items ORDER BY semantic_rank(features, 'q') DESC LIMIT 1"
    assert column_hints.for_session(runner, sql) is None  # stale: the name rule, no query
    assert engine.cursors == 0

    async def session_statement() -> object:
        assert await column_hints.ready(runner, "SELECT 1") is None  # wants none: no work
        assert not engine.worker_threads
        hints = await column_hints.ready(runner, sql)
        assert hints is column_hints.for_session(runner, sql)
        return hints

    hints = asyncio.run(session_statement())
    assert engine.worker_threads and threading.get_ident() not in engine.worker_threads
    assert hints is not None and hints.columns("items")["features"] == "vector"
    column_hints.catalog_changed(engine)
    assert column_hints.for_session(runner, sql) is None  # stale again until ready


def test_ddl_in_a_transaction_rechecks_after_it_ends() -> None:
    engine = FakeEngine()
    runner = FakeRunner(engine)
    cache = column_hints.cache_of(engine)
    ddl = Statement(sql="CREATE TABLE t (v FLOAT[3])", kind="ddl", tag="CREATE TABLE")
    select = Statement(sql="SELECT 1", kind="select", tag="SELECT")
    hints = cache.current()
    column_hints.note(runner, [ddl])
    column_hints.note(runner, [select])  # still inside the transaction
    assert cache.current() is hints
    engine.db.execute("CREATE TABLE t (v FLOAT[3])")  # "committed" now
    runner.txn_status = "I"
    column_hints.note(runner, [select])
    assert cache.current().columns("t") == {"v": "vector"}


def test_a_session_with_ddl_in_its_open_block_reads_its_own_catalog() -> None:
    engine = FakeEngine()
    engine.db.execute("CREATE TABLE t (a INT, b INT, c INT DEFAULT 3)")
    runner, other = FakeRunner(engine), FakeRunner(engine)
    insert = "INSERT INTO t VALUES (1, 2)"
    ddl = Statement(sql="ALTER TABLE t DROP COLUMN a", kind="ddl", tag="ALTER TABLE")

    def hints_of(who: FakeRunner) -> ColumnHints | None:
        return asyncio.run(column_hints.ready(who, insert))

    assert hints_of(runner).column_order("t") == ("a", "b", "c")
    column_hints.note(runner, [ddl])  # in its block: the hints are read as it sees them
    runner.cursor.execute("BEGIN")
    runner.cursor.execute("ALTER TABLE t DROP COLUMN a")
    column_hints.catalog_changed(engine)  # (the runner calls it after DDL)
    assert hints_of(runner).column_order("t") == ("b", "c")
    (st,) = transpile("INSERT INTO t VALUES (1)", hints=hints_of(runner))
    assert st.sql == 'INSERT INTO t ("b") VALUES (1)'  # its table, not the committed one
    assert hints_of(other).column_order("t") == ("a", "b", "c")
    runner.cursor.execute("COMMIT")
    runner.txn_status = "I"
    column_hints.transaction_ended(runner)  # rebuilt at once, for every session
    assert hints_of(other).column_order("t") == ("b", "c")
    assert hints_of(runner).column_order("t") == ("b", "c")


def test_a_block_that_ended_without_commit_is_settled_at_the_next_statement() -> None:
    # e.g. an implicit block around a multi-statement query: no COMMIT command runs.
    engine = FakeEngine()
    engine.db.execute("CREATE TABLE t (a INT, b INT DEFAULT 2)")
    runner = FakeRunner(engine)
    ddl = Statement(sql="ALTER TABLE t ADD COLUMN c INT", kind="ddl", tag="ALTER TABLE")
    column_hints.note(runner, [ddl, ddl])
    engine.db.execute("ALTER TABLE t ADD COLUMN c INT")
    runner.txn_status = "I"
    hints = asyncio.run(column_hints.ready(runner, "INSERT INTO t VALUES (1)"))
    assert hints is not None and hints.column_order("t") == ("a", "b", "c")


def run_error(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> PgError:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql, params)
    return map_duckdb_error(info.value, sql)


def test_type_errors_of_semantic_sql_name_semantic_rank() -> None:
    con = duckdb.connect()
    con.create_function("__HATI_EMBED__", lambda s: [1.0, 0.0], ["VARCHAR"], "FLOAT[2]")
    con.execute("CREATE TABLE t (embedding FLOAT[2], features FLOAT[2], title VARCHAR, n INT)")
    (unknown,) = transpile("SELECT semantic_rank(embedding, nullif(title, '')) FROM t")
    err = run_error(con, unknown.sql)
    assert err.sqlstate == "42804"
    assert "semantic_rank" in err.message and "text or a FLOAT[] vector" in err.message
    assert "CAST(... AS TEXT)" in err.hint and "FLOAT[2]" in err.hint
    (vector_as_text,) = transpile("SELECT semantic_rank(features, 'q') FROM t", vector_dims=2)
    err = run_error(con, vector_as_text.bind_sql(1), [[1.0, 0.0]])
    assert err.sqlstate == "42804" and "vector column was taken for text" in err.message
    err = run_error(con, "SELECT __HATI_EMBED__(n) FROM t")
    assert err.sqlstate == "42804" and "cannot embed a INTEGER" in err.message
    err = run_error(con, "SELECT array_cosine_similarity(features, [1, 2]) FROM t")
    assert err.sqlstate == "42804" and "must both be FLOAT[n] of one size" in err.message
    other = run_error(con, "SELECT no_such_function(1)")
    assert other.sqlstate == "42883"


def test_hints_object_is_what_transpile_takes() -> None:
    assert isinstance(column_hints.build([], []), ColumnHints)


def test_only_statements_that_can_use_hints_get_them() -> None:
    engine = FakeEngine()
    assert column_hints.for_sql(engine, "SELECT * FROM docs WHERE id = 1") is None
    assert column_hints.for_sql(engine, "DELETE FROM docs WHERE id = 1") is None
    for sql in (
        "UPDATE docs SET content = 'x'",
        "INSERT INTO docs VALUES (1)",
        "INSERT INTO d VALUES (1) ON CONFLICT (id) DO UPDATE SET c = 1",
        "SELECT Semantic_Rank(content, 'q') FROM docs",
        "SELECT 1 FROM a JOIN_VECTOR b ON VECTOR_MATCH(b.e, a.s)",
    ):
        assert isinstance(column_hints.for_sql(engine, sql), ColumnHints), sql


def test_build_primary_keys_only_where_every_copy_agrees() -> None:
    rows = [
        ("main", "a", "id", "INTEGER"),
        ("main", "b", "id", "INTEGER"),
        ("br", "b", "id", "INTEGER"),
        ("main", "c", "x", "INTEGER"),
        ("br", "c", "x", "INTEGER"),
    ]
    keys = [("main", "a", ["ID"]), ("main", "b", ["id"]), ("br", "b", ["id"]), ("main", "c", ["x"])]
    hints = column_hints.build(rows, [], keys)
    assert hints.primary_key("a") == ("id",)
    assert hints.primary_key("b") == ("id",)
    assert hints.primary_key("c") is None  # br.c has no key: a query may mean either


def test_unique_keys_and_drawn_columns_from_the_catalog() -> None:
    """An ON CONFLICT without a target's arbiters (transpiler/upsert_guard.py): the table's
    unique constraints and unique indexes (an expression's as DuckDB SQL)."""
    con = duckdb.connect()
    con.execute("CREATE SEQUENCE s_q")
    con.execute(
        "CREATE TABLE uk (id int DEFAULT nextval('s_q') PRIMARY KEY, e text UNIQUE, a int, b int)"
    )
    con.execute("CREATE UNIQUE INDEX uk_ab ON uk (a, b)")
    con.execute("CREATE TABLE ux (id int PRIMARY KEY, n text)")
    con.execute("CREATE UNIQUE INDEX ux_lower ON ux (lower(n))")
    hints = column_hints.build(
        con.execute(column_hints._COLUMNS_SQL).fetchall(),
        [],
        [],
        [],
        con.execute(column_hints._UNIQUE_SQL).fetchall(),
    )
    assert sorted(hints.unique_keys("uk") or ()) == [("a", "b"), ("e",), ("id",)]
    assert hints.drawn_columns("uk") == frozenset({"id"})
    assert sorted(hints.unique_keys("ux") or ()) == [("(lower(n))",), ("id",)]
