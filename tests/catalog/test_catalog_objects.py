"""The catalog objects themselves: install, type OIDs, reg* helpers, transpiler names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from proxy.db.catalog import functions, install, prepare_cursor
from proxy.pgserver.result_shape import JSONB_TYPES
from proxy.wire.types import pg_type_for
from transpiler.pgcompat import MISSING_PG_FUNCTIONS


@pytest.fixture
def cur() -> Iterator[duckdb.DuckDBPyConnection]:
    conn = duckdb.connect(":memory:")
    install(conn, users=["alice"])
    c = conn.cursor()
    prepare_cursor(c)
    yield c  # conn lives on meanwhile: the catalog's Python functions are registered on it


def test_install_is_idempotent_and_leaves_the_user_database_alone(tmp_path: Path) -> None:
    path = str(tmp_path / "user.duckdb")
    conn = duckdb.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
    install(conn)
    install(conn)  # every server start runs it again
    rels = "SELECT relname FROM pg_class WHERE relnamespace = 2200 ORDER BY relname"
    assert conn.execute(rels).fetchall() == [
        ("t",),
        ("t_pkey",),
    ]
    conn.close()
    reopened = duckdb.connect(path)
    objects = reopened.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'user' "
        "UNION ALL SELECT schema_name, view_name FROM duckdb_views() "
        "WHERE database_name = 'user' AND NOT internal ORDER BY ALL"
    ).fetchall()
    # the user's table, and the server's comment, constraint, domain, materialized-view,
    # SQL function, trigger and view column type registries (system relations: no client
    # lists them; proxy/pgserver/object_comments.py, foreign_keys.py, domains.py, matviews.py,
    # triggers.py, view_types.py, transpiler/sql_functions.py)
    assert objects == [
        ("main", "__hati_comments"),
        ("main", "__hati_constraints"),
        ("main", "__hati_domain_checks"),
        ("main", "__hati_domains"),
        ("main", "__hati_matviews"),
        ("main", "__hati_routines"),
        ("main", "__hati_triggers"),
        ("main", "__hati_view_types"),
        ("main", "t"),
    ]
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
    "DECIMAL(38,10)": "numeric",  # PostgreSQL's bare numeric (transpiler/numeric_type.py)
    "DECIMAL(20,4)": "numeric(20,4)",
    "VARCHAR": "text",
    "BLOB": "bytea",
    "DATE": "date",
    "TIME": "time without time zone",
    "TIMESTAMP": "timestamp without time zone",
    "TIMESTAMPTZ": "timestamp with time zone",
    "INTERVAL": "interval",
    "UUID": "uuid",
    "JSON": "jsonb",
    "JSON[]": "jsonb[]",
    "FLOAT[384]": "vector(384)",  # what pgvector's vector(384) becomes
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
        # a table's JSON column is jsonb in results (result_shape.as_jsonb) and here
        wire = pg_type_for(JSONB_TYPES.get(duck, duck))
        # FLOAT[384] is vector(384) in the catalog and on the wire alike (pgvector's OID)
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
        ("pg_database_owner", 6171),  # PostgreSQL 15's owner of public
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


def test_vector_columns_are_pgvector_vectors(cur: duckdb.DuckDBPyConnection) -> None:
    """FLOAT[n] (what vector(n) becomes) is pgvector's vector(n) in the catalog; other arrays
    stay arrays."""
    cur.execute(
        "CREATE TABLE emb (id INTEGER, v FLOAT[384], small FLOAT[3], plain FLOAT[], d DOUBLE[3])"
    )
    rows = cur.execute(
        "SELECT attname, format_type(atttypid, atttypmod), atttypid, atttypmod, attndims "
        "FROM pg_attribute WHERE attrelid = __hati_regclass('emb') ORDER BY attnum"
    ).fetchall()
    assert rows == [
        ("id", "integer", 23, -1, 0),
        ("v", "vector(384)", 16400, 384, 0),
        ("small", "vector(3)", 16400, 3, 0),
        ("plain", "real[]", 1021, -1, 1),
        ("d", "double precision[]", 1022, -1, 1),
    ]
    info = cur.execute(
        "SELECT column_name, data_type, udt_schema, udt_name FROM __hati_catalog.info.columns "
        "WHERE table_name = 'emb' ORDER BY ordinal_position"
    ).fetchall()
    assert info == [
        ("id", "integer", "pg_catalog", "int4"),
        ("v", "USER-DEFINED", "public", "vector"),  # as PostgreSQL reports pgvector's type
        ("small", "USER-DEFINED", "public", "vector"),
        ("plain", "ARRAY", "pg_catalog", "_float4"),
        ("d", "ARRAY", "pg_catalog", "_float8"),
    ]
    assert cur.execute(
        "SELECT typname, typnamespace, typcategory, typarray, format_type(oid, -1) "
        "FROM pg_type WHERE oid = 16400"
    ).fetchone() == ("vector", 2200, "U", 16405, "vector")
    assert cur.execute("SELECT format_type(16405, 3)").fetchone() == ("vector(3)[]",)


def test_internal_relations_are_not_listed(cur: duckdb.DuckDBPyConnection) -> None:
    """The server's own relations in main (and their indexes) are read by name, not listed."""
    cur.execute("CREATE TABLE _hatidata_cache (k VARCHAR PRIMARY KEY, v INTEGER)")
    cur.execute("CREATE INDEX _hatidata_cache_v ON _hatidata_cache (v)")
    cur.execute("CREATE VIEW _hatidata_mine AS SELECT 1 AS one")
    cur.execute("CREATE SEQUENCE __hati_seq")
    cur.execute("CREATE TABLE mine (k VARCHAR PRIMARY KEY)")
    listed = {r[0] for r in cur.execute("SELECT relname FROM pg_class").fetchall()}
    assert {"mine", "mine_pkey"} <= listed
    assert not {"_hatidata_cache", "_hatidata_cache_pkey", "_hatidata_cache_v", "_hatidata_mine",
                "__hati_seq"} & listed  # fmt: skip
    assert not [n for n in listed if n.startswith("__hati")]  # nor the catalog's own helpers
    assert cur.execute("SELECT indexname FROM pg_indexes").fetchall() == [("mine_pkey",)]
    assert cur.execute("SELECT * FROM _hatidata_mine").fetchall() == [(1,)]  # still readable


def test_declared_functions_are_in_pg_proc(cur: duckdb.DuckDBPyConnection) -> None:
    """hatiproxy's own functions: the semantic ones from the start, others when declared."""

    def shown(name: str) -> list[tuple]:
        return cur.execute(
            "SELECT n.nspname, p.proname, pg_get_function_result(p.oid), "
            "pg_get_function_arguments(p.oid), p.proretset, p.pronargs, p.pronargdefaults "
            "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE p.proname = ? ORDER BY p.oid",
            [name],
        ).fetchall()

    assert shown("semantic_match") == [
        ("public", "semantic_match", "boolean",
         "col anyelement, search_text text, threshold double precision DEFAULT 0.7", False, 3, 1)
    ]  # fmt: skip
    assert shown("hatiproxy_embed_column") == [
        ("public", "hatiproxy_embed_column", "bigint", "table_name text, column_name text",
         False, 2, 0)
    ]  # fmt: skip
    assert shown("hatidata_context")[0][2:4] == (
        "SETOF record", "table_name text, search_text text, k integer DEFAULT 5")  # fmt: skip
    functions.declare(
        cur,
        [
            functions.FunctionDecl(
                "recall",
                [("query", "VARCHAR", None), ("top_k", "BIGINT", "10"), ("kind", "VARCHAR", "''"),
                 ("since", "TIMESTAMPTZ", "NULL"), ("v", "FLOAT[]", "NULL")],
                columns=[("id", "UUID"), ("score", "DOUBLE"), ("meta", "JSON")],
                description="Find things",
            )
        ],
    )  # fmt: skip
    assert shown("recall") == [
        ("public", "recall", "TABLE(id uuid, score double precision, meta json)",
         "query text, top_k bigint DEFAULT 10, kind text DEFAULT ''::text, since timestamp with "
         "time zone DEFAULT NULL::timestamp with time zone, v real[] DEFAULT NULL::real[]",
         True, 5, 4)
    ]  # fmt: skip
    row = cur.execute(
        "SELECT proargtypes, proallargtypes, proargmodes, proargnames, prorettype, "
        "obj_description(oid, 'pg_proc') FROM pg_proc WHERE proname = 'recall'"
    ).fetchone()
    assert row == (
        [25, 20, 25, 1184, 1021], [25, 20, 25, 1184, 1021, 2950, 701, 114],
        ["i", "i", "i", "i", "i", "t", "t", "t"],
        ["query", "top_k", "kind", "since", "v", "id", "score", "meta"], 2249, "Find things",
    )  # fmt: skip
    functions.declare(cur, [functions.FunctionDecl("recall", [], columns=[("n", "BIGINT")])])
    assert shown("recall") == [("public", "recall", "TABLE(n bigint)", "", True, 0, 0)]
    # one oid each, none shared with DuckDB's functions (whose overloads share theirs)
    ours = cur.execute("SELECT oid FROM pg_proc WHERE prolang = 12").fetchall()
    others = cur.execute("SELECT oid FROM pg_proc WHERE prolang <> 12").fetchall()
    assert len(ours) == len(set(ours)) >= 7 and not set(ours) & set(others)


def test_functions_declared_with_the_install_as_declared_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server declares the agent functions with the install (pg_proc's rows computed
    # once), then again once its agent layer is built: that second declare changes nothing.
    decls = [
        functions.FunctionDecl("recall", [("query", "VARCHAR", None), ("k", "BIGINT", "10")],
                               columns=[("id", "UUID")], description="Find things"),
        functions.FunctionDecl("bump", [("n", "INTEGER", None)], returns="INTEGER"),
    ]  # fmt: skip
    after, with_it = duckdb.connect(), duckdb.connect()
    install(after)
    functions.declare(after, decls)
    install(with_it, declared=decls)
    rows = "SELECT * FROM pg_proc WHERE prolang = 12 ORDER BY oid"
    assert with_it.execute(rows).fetchall() == after.execute(rows).fetchall()
    assert len(with_it.execute(rows).fetchall()) >= 8
    refreshes: list[object] = []
    refresh = functions.refresh
    monkeypatch.setattr(functions, "refresh", lambda c: (refreshes.append(c), refresh(c)))
    functions.declare(with_it, decls[::-1])
    assert refreshes == []
    changed = functions.FunctionDecl("bump", [("n", "BIGINT", None)], returns="BIGINT")
    functions.declare(with_it, [changed])
    assert len(refreshes) == 1
    assert with_it.execute(
        "SELECT format_type(prorettype, NULL) FROM pg_proc WHERE proname = 'bump'"
    ).fetchall() == [("bigint",)]


def test_system_catalogs_have_tableoid_and_postgres_oids(cur: duckdb.DuckDBPyConnection) -> None:
    # PostgreSQL's `tableoid` system column: the catalog's own OID, which pg_class lists.
    assert cur.execute(
        "SELECT DISTINCT x.tableoid FROM pg_extension x JOIN pg_namespace n "
        "ON n.oid = x.extnamespace"
    ).fetchall() == [(3079,)]
    for name, oid in [("pg_class", 1259), ("pg_type", 1247), ("pg_namespace", 2615),
                      ("pg_proc", 1255), ("pg_am", 2601), ("pg_attribute", 1249)]:  # fmt: skip
        assert cur.execute(f"SELECT DISTINCT tableoid FROM {name}").fetchall() == [(oid,)]
        assert cur.execute(
            "SELECT oid, relkind, relnamespace FROM pg_class WHERE relname = ?", [name]
        ).fetchall() == [(oid, "r", 11)]
    # the wrapped views' bases are helpers, never listed
    assert cur.execute(
        "SELECT count(*) FROM pg_class WHERE relname LIKE '\\_\\_hati%' ESCAPE '\\'"
    ).fetchall() == [(0,)]


def test_acldefault_is_the_owners_default_privileges(cur: duckdb.DuckDBPyConnection) -> None:
    assert cur.execute(
        "SELECT n.nspname, acldefault('n', n.nspowner) FROM pg_namespace n "
        "WHERE n.nspname = 'public'"
    ).fetchall() == [("public", ["pg_database_owner=UC/pg_database_owner"])]
    assert cur.execute("SELECT acldefault('r', 10), acldefault('c', 10)").fetchall() == [
        (["hatidata=arwdDxt/hatidata"], [])
    ]


def test_pg_dump_catalogs_exist_empty_and_proargtypes_is_an_oidvector(
    cur: duckdb.DuckDBPyConnection,
) -> None:
    for name in ("pg_init_privs", "pg_transform", "pg_default_acl", "pg_opfamily",
                 "pg_subscription", "pg_seclabel", "pg_largeobject_metadata",
                 "pg_db_role_setting"):  # fmt: skip
        assert cur.execute(f"SELECT count(*), count(tableoid) FROM {name}").fetchall() == [(0, 0)]
    # PostgreSQL's built-in ones (42_pg_builtins.sql), all below 16384: pg_dump leaves them out
    for name in ("pg_aggregate", "pg_ts_config", "pg_cast"):
        ((n, with_tableoid),) = cur.execute(
            f"SELECT count(*), count(tableoid) FROM {name}"
        ).fetchall()
        assert n == with_tableoid > 0, name
    # an oidvector: a list here, PostgreSQL's '2283 2283' on the wire (tests/clients/
    # test_pg_dump.py), as pg_dump and pgjdbc split it
    cur.execute("CREATE MACRO two_args(a, b) AS a + b")
    assert cur.execute(
        "SELECT proargtypes, typeof(proargtypes) FROM pg_proc WHERE proname = 'two_args'"
    ).fetchall() == [([2283, 2283], "UINTEGER[]")]


def test_pg_options_to_table_takes_an_outer_column(cur: duckdb.DuckDBPyConnection) -> None:
    # DuckDB's table macros cannot take an outer query's column; the transpiler makes the
    # call a derived table, as pg_dump's correlated subqueries need.
    from transpiler import transpile

    (st,) = transpile(
        "SELECT x, array_to_string(ARRAY(SELECT quote_ident(option_name) || ' ' || "
        "quote_literal(option_value) FROM pg_catalog.pg_options_to_table(o) "
        "ORDER BY option_name), ', ') FROM (VALUES (1, ARRAY['b=2', 'a=x=1']), (2, NULL)) v(x, o) "
        "ORDER BY x"
    )
    assert cur.execute(st.sql).fetchall() == [(1, "a 'x=1', b '2'"), (2, "")]
