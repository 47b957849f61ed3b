"""Materialized-view statements and CREATE TABLE LIKE as the transpiler hands them to the
server (transpiler/matviews.py, transpiler/table_like.py): DDL on the stored table that
the ownership and access checks read, and what the server carries out."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.errors import TranspileError


def one(sql: str):
    (st,) = transpile(sql)
    return st


def test_create_with_and_without_data() -> None:
    st = one('CREATE MATERIALIZED VIEW s.mv (x, "Y") AS SELECT a, count(*) FROM t GROUP BY a')
    assert st.tag == "SELECT" and st.kind == "ddl"  # PostgreSQL: SELECT n
    assert st.sql.startswith('CREATE TABLE "s"."mv" AS SELECT * FROM (SELECT a, COUNT(*)')
    assert st.matview is not None and st.matview.with_data
    assert st.matview.definition == " SELECT a, count(*) FROM t GROUP BY a;"
    assert st.matview.query.endswith('AS __hati_mv("x", "Y")')
    empty = one("create materialized view if not exists mv as select 1::int as a with no data")
    assert empty.tag == "CREATE MATERIALIZED VIEW"
    assert empty.sql.endswith("LIMIT 0") and "IF NOT EXISTS" in empty.sql
    assert empty.matview is not None and not empty.matview.with_data


def test_three_part_names_and_public() -> None:
    st = one('create materialized view "db"."public"."MV" as select 1 as a')
    assert st.matview is not None and st.matview.names == (("main", "MV"),)
    drop = one('DROP MATERIALIZED VIEW IF EXISTS a, s."B" CASCADE')
    assert drop.sql == 'DROP TABLE IF EXISTS "a" CASCADE; DROP TABLE IF EXISTS "s"."B" CASCADE'


def test_refresh_alter_comment() -> None:
    st = one("REFRESH MATERIALIZED VIEW CONCURRENTLY public.mv WITH DATA")
    assert st.sql == 'DELETE FROM "main"."mv"' and st.matview is not None
    assert st.matview.concurrently and st.matview.with_data
    assert one("ALTER MATERIALIZED VIEW mv RENAME TO mv2").sql == 'ALTER TABLE "mv" RENAME TO "mv2"'
    col = one("ALTER MATERIALIZED VIEW mv RENAME COLUMN a TO b")
    assert col.sql == 'ALTER TABLE "mv" RENAME COLUMN "a" TO "b"'
    assert one("COMMENT ON MATERIALIZED VIEW mv IS 'x'").sql == "COMMENT ON TABLE mv IS 'x'"
    # pg_dump's ownership statement stays acknowledged
    assert one("ALTER MATERIALIZED VIEW mv OWNER TO bob").kind == "utility"


def test_refused_forms() -> None:
    with pytest.raises(TranspileError) as info:
        one("CREATE MATERIALIZED VIEW mv AS SELECT $1::int AS a")
    assert info.value.sqlstate == "0A000"
    with pytest.raises(TranspileError) as info:
        one("CREATE MATERIALIZED VIEW mv AS INSERT INTO t VALUES (1)")
    assert info.value.sqlstate == "42601"


def test_create_table_like() -> None:
    st = one("CREATE TABLE t2 (a int, LIKE public.src INCLUDING ALL EXCLUDING INDEXES, b text)")
    like = st.table_like
    assert like is not None and like.sql == "CREATE TABLE t2 (a INT, __hati_like_0__ INT, b TEXT)"
    (source,) = like.sources
    assert (source.schema, source.table) == ("main", "src")
    assert "INDEXES" not in source.options and {"DEFAULTS", "CONSTRAINTS"} <= source.options
    assert 'SELECT * FROM "main"."src" LIMIT 0' in st.sql  # the access checks read the source


def test_create_table_as_with_no_data() -> None:
    st = one("CREATE TABLE t3 AS SELECT id, name FROM src WITH NO DATA")
    assert st.tag == "CREATE TABLE AS"
    assert (
        st.sql
        == "CREATE TABLE t3 AS SELECT * FROM (SELECT id, name FROM src) AS __hati_no_data LIMIT 0"
    )
    assert st.created_as == ("", "t3") and st.column_origins is not None
    assert one("CREATE TABLE t4 AS SELECT 1 AS a WITH DATA").tag == "SELECT"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE MATERIALIZED VIEW mv AS SELECT 1 AS a",
        "REFRESH MATERIALIZED VIEW mv",  # its `sql` alone would empty the stored table
        "CREATE TABLE t2 (LIKE src)",
    ],
)
def test_paths_without_the_wire_server_refuse_them(sql: str) -> None:
    """MCP / REST / branch SQL run `Statement.native()`: these are the wire server's."""
    with pytest.raises(TranspileError) as info:
        one(sql).native()
    assert info.value.sqlstate == "0A000"
