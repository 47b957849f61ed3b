"""The catalog objects themselves: install, type OIDs, reg* helpers, transpiler names."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from proxy.db.catalog import install, prepare_cursor
from proxy.wire.types import pg_type_for
from transpiler.pgcompat import MISSING_PG_FUNCTIONS


@pytest.fixture
def cur() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect(":memory:")
    install(conn, users=["alice"])
    c = conn.cursor()
    prepare_cursor(c)
    return c


def test_install_is_idempotent_and_leaves_the_user_database_alone(tmp_path: Path) -> None:
    path = str(tmp_path / "user.duckdb")
    conn = duckdb.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
    install(conn)
    install(conn)  # every server start runs it again
    assert conn.execute("SELECT relname FROM pg_class WHERE relnamespace = 2200").fetchall() == [
        ("t",),
        ("t_pkey",),
    ]
    conn.close()
    reopened = duckdb.connect(path)
    objects = reopened.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'user' "
        "UNION ALL SELECT schema_name, view_name FROM duckdb_views() "
        "WHERE database_name = 'user' AND NOT internal"
    ).fetchall()
    assert objects == [("main", "t")]
    assert reopened.execute("SELECT * FROM t").fetchall() == [(1,)]
    install(reopened)  # on an existing file too
    assert reopened.execute("SELECT current_database(), current_schema()").fetchall() == [
        ("hatidata", "public")
    ]


def test_every_function_the_transpiler_renames_exists(cur: duckdb.DuckDBPyConnection) -> None:
    defined = {
        r[0]
        for r in cur.execute(
            "SELECT function_name FROM duckdb_functions() WHERE database_name = '__hati_catalog'"
        ).fetchall()
    }
    wanted = {f"__hati_{name}" for name in MISSING_PG_FUNCTIONS}
    for kind in ("regclass", "regtype", "regproc", "regnamespace", "regrole"):
        wanted |= {f"__hati_{kind}", f"__hati_{kind}_name"}
    assert sorted(wanted - defined) == []


# DuckDB column type -> what psql's \d prints (format_type) for it.
TYPES = {
    "BOOLEAN": "boolean",
    "TINYINT": "smallint",
    "SMALLINT": "smallint",
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "HUGEINT": "numeric",
    "UBIGINT": "numeric",
    "REAL": "real",
    "DOUBLE": "double precision",
    "DECIMAL(10,2)": "numeric(10,2)",
    "DECIMAL(38,10)": "numeric(38,10)",
    "VARCHAR": "text",
    "BLOB": "bytea",
    "DATE": "date",
    "TIME": "time without time zone",
    "TIMESTAMP": "timestamp without time zone",
    "TIMESTAMPTZ": "timestamp with time zone",
    "INTERVAL": "interval",
    "UUID": "uuid",
    "JSON": "json",
    "FLOAT[384]": "real[]",
    "FLOAT[]": "real[]",
    "INTEGER[]": "integer[]",
    "VARCHAR[]": "text[]",
    "DOUBLE[][]": "double precision[]",
    "STRUCT(a INTEGER)": "text",
    "MAP(VARCHAR, INTEGER)": "text",
    "STRUCT(a INTEGER)[]": "text",
}


def test_column_types_agree_with_the_wire_layer(cur: duckdb.DuckDBPyConnection) -> None:
    cols = ", ".join(f'"c{i}" {t}' for i, t in enumerate(TYPES))
    cur.execute(f"CREATE TABLE typed ({cols})")
    rows = cur.execute(
        "SELECT a.attname, a.atttypid, format_type(a.atttypid, a.atttypmod), t.typname "
        "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE a.attrelid = __hati_regclass('typed') ORDER BY a.attnum"
    ).fetchall()
    real_types = [str(d[1]) for d in cur.execute("SELECT * FROM typed").description]
    for (name, oid, shown, typname), duck in zip(rows, real_types, strict=True):
        wire = pg_type_for(duck)
        assert (oid, typname) == (wire.oid, wire.name), f"{name} {duck}"
        assert shown == TYPES[list(TYPES)[int(name[1:])]], duck


def test_pg_type_has_the_wire_oids(cur: duckdb.DuckDBPyConnection) -> None:
    expected = {
        "bool": 16, "int2": 21, "int4": 23, "int8": 20, "float4": 700, "float8": 701,
        "numeric": 1700, "text": 25, "varchar": 1043, "bytea": 17, "date": 1082,
        "time": 1083, "timestamp": 1114, "timestamptz": 1184, "interval": 1186,
        "uuid": 2950, "json": 114, "jsonb": 3802, "_float4": 1021, "_int4": 1007,
        "_text": 1009,
    }  # fmt: skip
    got = dict(cur.execute("SELECT typname, oid FROM pg_type").fetchall())
    assert {k: got.get(k) for k in expected} == expected
    assert cur.execute("SELECT typelem FROM pg_type WHERE oid = 1021").fetchone() == (700,)
    assert (
        cur.execute("SELECT count(*) FROM pg_type GROUP BY oid HAVING count(*) > 1").fetchall()
        == []
    )


def test_reg_helpers(cur: duckdb.DuckDBPyConnection) -> None:
    cur.execute("CREATE TABLE items (id INTEGER); CREATE SCHEMA s2; CREATE TABLE s2.other (a INT)")
    oid = cur.execute("SELECT __hati_regclass('items')").fetchone()[0]
    assert cur.execute("SELECT __hati_regclass('public.items')").fetchone()[0] == oid
    assert cur.execute("SELECT __hati_regclass('\"items\"')").fetchone()[0] == oid
    assert cur.execute(f"SELECT __hati_regclass_name({oid})").fetchone()[0] == "items"
    other = cur.execute("SELECT __hati_regclass('s2.other')").fetchone()[0]
    assert cur.execute(f"SELECT __hati_regclass_name({other})").fetchone()[0] == "s2.other"
    assert (
        cur.execute("SELECT __hati_regclass('pg_class')").fetchone()[0]
        == cur.execute(
            "SELECT oid FROM pg_class WHERE relname = 'pg_class' AND relnamespace = 11"
        ).fetchone()[0]
    )
    with pytest.raises(duckdb.Error, match='relation "nope" does not exist'):
        cur.execute("SELECT __hati_regclass('nope')").fetchall()
    assert cur.execute("SELECT to_regclass('nope'), to_regtype('nope')").fetchone() == (None, None)
    assert cur.execute(
        "SELECT __hati_regtype('integer'), __hati_regtype('real[]'), __hati_regtype_name(1184),"
        " __hati_regnamespace_name(2200), __hati_regrole_name(10)"
    ).fetchone() == (23, 1021, "timestamp with time zone", "public", "hatidata")


def test_public_not_main_everywhere(cur: duckdb.DuckDBPyConnection) -> None:
    cur.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, v FLOAT[3])")
    assert cur.execute("SELECT nspname FROM pg_namespace WHERE nspname = 'main'").fetchall() == []
    for view, col in [
        ("pg_tables", "schemaname"),
        ("__hati_catalog.info.tables", "table_schema"),
        ("__hati_catalog.info.columns", "table_schema"),
        ("__hati_catalog.info.table_constraints", "table_schema"),
        ("__hati_catalog.info.schemata", "schema_name"),
    ]:
        got = {r[0] for r in cur.execute(f"SELECT {col} FROM {view}").fetchall()}
        assert "public" in got and "main" not in got, view
    assert cur.execute("SELECT current_schemas(true), current_schemas(false)").fetchone() == (
        ["pg_catalog", "public"],
        ["public"],
    )


def test_roles_and_settings(cur: duckdb.DuckDBPyConnection) -> None:
    assert cur.execute("SELECT rolname, oid FROM pg_roles ORDER BY oid").fetchall() == [
        ("hatidata", 10),
        ("alice", 16385),
    ]
    assert cur.execute("SELECT pg_get_userbyid(10), pg_get_userbyid(7)").fetchone() == (
        "hatidata",
        "unknown (OID=7)",
    )
    assert cur.execute(
        "SELECT __hati_current_setting('server_version_num'), "
        "__hati_current_setting('nope', true), __hati_version() LIKE 'PostgreSQL 15.%'"
    ).fetchone()[1:] == (None, True)
    words = cur.execute("SELECT word, catcode FROM pg_get_keywords() WHERE word = 'select'")
    assert words.fetchall() == [("select", "R")]
