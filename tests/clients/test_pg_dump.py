"""pg_dump / pg_restore / psql 15 against hatiproxy: dump a schema, restore it into a fresh
server, get the same schema and rows back.

The source has tables (a serial key, varchar(n), numeric, defaults, text with tabs and
newlines, NULLs), a view, a sequence that has been drawn from, indexes (unique, multi
column), a macro and comments. `pg_dump -Fp` and `-Fc` complete; the plain dump replayed
by `psql -v ON_ERROR_STOP=1 -f` and the custom dump by `pg_restore --exit-on-error` into
empty servers both finish without error, and the restored relations, rows, sequence
positions, defaults, indexes, comments and the macro match the source; restored into a
real PostgreSQL 15 (pg_restore --no-owner) the dump gives the same rows. hatiproxy's own
objects (its agent functions, pgvector's types, the hnsw access method: built-in
extensions) are left out of the dump, as pg_dump leaves out what initdb made.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

BIN = Path("/usr/lib/postgresql/15/bin")

SCHEMA = [
    "CREATE TABLE items (id serial PRIMARY KEY, name varchar(40) NOT NULL,"
    " price numeric(10,2), stock integer DEFAULT 7)",
    "CREATE INDEX items_name_idx ON items (name)",
    "CREATE UNIQUE INDEX items_name_price_idx ON items (name, price)",
    "CREATE SEQUENCE counter_seq START 5",
    "SELECT nextval('counter_seq'), nextval('counter_seq')",
    "CREATE VIEW cheap AS SELECT id, name, stock / 2 AS half, stock % 3 AS rest"
    " FROM items WHERE price < 10",
    "COMMENT ON TABLE items IS 'things for sale'",
    "COMMENT ON COLUMN items.name IS 'what it is'",
    # a bare numeric keeps its decimals; a generated column is dumped as one, not as data
    "CREATE TABLE notes (id integer, body text, items_id integer, ratio numeric,"
    " twice integer GENERATED ALWAYS AS (id * 2) STORED)",
    # Divisions: stored through the transpiler's macros, dumped as PostgreSQL's `/` and `%`.
    "CREATE TABLE parts (id integer PRIMARY KEY, qty integer DEFAULT 10 / 3 CHECK (qty % 100 >= 0))",
    "CREATE MACRO add_one(x) AS x + 1",
    # a SQL function keeps its declaration (transpiler/sql_functions.py)
    "CREATE FUNCTION twice(n integer, label text DEFAULT 'x') RETURNS text IMMUTABLE"
    " LANGUAGE sql AS $$SELECT label || (n * 2)$$",
    # a materialized view (sorted before the table it reads) with a unique index
    "CREATE MATERIALIZED VIEW item_names AS SELECT id, upper(name) AS loud FROM items"
    " WHERE price IS NOT NULL",
    "CREATE UNIQUE INDEX item_names_id ON item_names (id)",
    "INSERT INTO items (name, price) VALUES ('pen', 1.50), ('book', 12.00), ('it''s', NULL)",
    "INSERT INTO notes (id, body, items_id, ratio) VALUES"
    " (1, E'tab\\tand\\nnewline \\\\ back', 1, 1.23456), (2, NULL, NULL, NULL), (3, '', 2, 100)",
    "REFRESH MATERIALIZED VIEW item_names",
]


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: apt-get install postgresql-client-15 (.ci/run does)")
    return str(path)


def _conn(server: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(
        host=server.host, port=server.port, user="x", dbname="hatidata", autocommit=True
    )


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, timeout=180, **kw)


def _where(server: ServerProcess) -> list[str]:
    return ["-h", server.host, "-p", str(server.port), "-U", "x"]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> ServerProcess:
    srv = start_server(tmp_path_factory.mktemp("pg_dump_src"), "--database", ":memory:")
    try:
        with _conn(srv) as conn:
            for statement in SCHEMA:
                conn.execute(statement)
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def target(tmp_path: Path) -> ServerProcess:
    srv = start_server(tmp_path, "--database", ":memory:")
    yield srv
    srv.stop()


def _state(server: ServerProcess) -> dict[str, object]:
    """What a restore must reproduce, read through psycopg."""
    with _conn(server) as conn:
        q = conn.execute
        return {
            "relations": q(
                "SELECT table_name, table_type FROM information_schema.tables "
                "WHERE table_schema = 'public' ORDER BY 1"
            ).fetchall(),
            "sequences": q(
                "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall(),
            "items": q("SELECT id, name, price, stock FROM items ORDER BY id").fetchall(),
            "notes": q("SELECT id, body, items_id, ratio, twice FROM notes ORDER BY id").fetchall(),
            "cheap": q("SELECT * FROM cheap ORDER BY id").fetchall(),
            "item_names": q("SELECT * FROM item_names ORDER BY id").fetchall(),
            "matviews": q(
                "SELECT schemaname, matviewname, hasindexes, ispopulated FROM pg_matviews"
            ).fetchall(),
            "counter": q("SELECT last_value, is_called FROM counter_seq").fetchall(),
            "indexes": q(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall(),
            "comments": q(
                "SELECT obj_description('items'::regclass, 'pg_class'), "
                "col_description('items'::regclass, 2)"
            ).fetchall(),
            "macro": q("SELECT add_one(41)").fetchall(),
            "function": q(
                "SELECT twice(2), twice(3, 'y'), pg_get_function_arguments(p.oid), "
                "pg_get_function_result(p.oid), p.provolatile FROM pg_proc p "
                "WHERE p.proname = 'twice'"
            ).fetchall(),
            "divisions": q(
                "SELECT pg_get_viewdef('cheap'::regclass), pg_get_expr(adbin, adrelid),"
                " pg_get_constraintdef(c.oid) FROM pg_attrdef, pg_constraint c"
                " WHERE adrelid = 'parts'::regclass AND c.conrelid = adrelid AND c.contype = 'c'"
            ).fetchall(),
            "pkey": q(
                "SELECT conname, contype FROM pg_constraint WHERE conrelid = 'items'::regclass"
            ).fetchall(),
        }


def _after_restore_inserts(server: ServerProcess) -> list[tuple]:
    """A restored serial column keeps drawing after the restored rows, not from 1."""
    with _conn(server) as conn:
        return conn.execute(
            "INSERT INTO items (name, price) VALUES ('new', 2) RETURNING id, stock"
        ).fetchall()


def test_catalog_vectors_go_out_as_int2vector_and_oidvector_text(source) -> None:
    with _conn(source) as conn:
        cur = conn.execute(
            "SELECT i.indkey, i.indclass, p.proargtypes FROM pg_index i, pg_proc p "
            "WHERE i.indexrelid = 'items_name_price_idx'::regclass AND p.proname = 'add_one'"
        )
        assert [d.type_code for d in cur.description] == [22, 30, 30]
    out = _run(
        _tool("psql"), *_where(source), "hatidata", "-AtF|", "-c",
        "SELECT i.indkey, p.proargtypes, i.indkey[1], array_length(i.indkey, 1), "
        "2 = ANY(i.indkey) FROM pg_index i, pg_proc p "
        "WHERE i.indexrelid = 'items_name_price_idx'::regclass AND p.proname = 'add_one'",
        text=True,
    )  # fmt: skip
    # PostgreSQL's text forms (space separated); still a list to index, measure and search,
    # and subscripts from 0 as PostgreSQL's int2vector (indkey[1] is the second column).
    assert out.stdout == "2 3|2283|3|2|t\n", out.stderr


def test_plain_dump_leaves_out_built_in_objects(source, tmp_path: Path) -> None:
    out = _run(_tool("pg_dump"), "-v", *_where(source), "hatidata", text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    dump = out.stdout
    for expected in ("CREATE TABLE public.items", "CREATE VIEW public.cheap AS",
                     "CREATE SEQUENCE public.counter_seq", "ALTER SEQUENCE public.items_id_seq "
                     "OWNED BY public.items.id", "COPY public.notes (id, body, items_id, ratio) FROM stdin",
                     "    ratio numeric,", "twice integer GENERATED ALWAYS AS (",
                     "SELECT pg_catalog.setval('public.counter_seq', 6, true)",
                     "CREATE UNIQUE INDEX items_name_price_idx ON public.items USING btree "
                     "(name, price)", "COMMENT ON TABLE public.items IS 'things for sale'",
                     "CREATE FUNCTION public.add_one(x anyelement)",
                     "CREATE FUNCTION public.twice(n integer, label text DEFAULT 'x'::text) "
                     "RETURNS text\n    LANGUAGE sql IMMUTABLE\n    AS $$SELECT label || (n * 2)$$;",
                     "CREATE MATERIALIZED VIEW public.item_names AS",
                     "REFRESH MATERIALIZED VIEW public.item_names;",
                     "CREATE UNIQUE INDEX item_names_id ON public.item_names USING btree (id)"):  # fmt: skip
        assert expected in dump, dump
    # the view's query, not DuckDB's CREATE VIEW statement, and after the table it reads
    assert "AS\nCREATE VIEW" not in dump
    assert dump.index("CREATE VIEW public.cheap") > dump.index("CREATE TABLE public.items")
    matview = dump.index("CREATE MATERIALIZED VIEW public.item_names")
    assert matview > dump.index("CREATE TABLE public.items")
    assert dump.index("REFRESH MATERIALIZED VIEW") > dump.index("COPY public.items")
    # nothing of hatiproxy's own: agent functions, pgvector's types, hnsw, public's defaults
    for built_in in ("agent_inbox", "semantic_match", "vector", "hnsw", "EXTENSION",
                     "REVOKE", "GRANT", "SET STORAGE", "COMMENT ON SCHEMA"):  # fmt: skip
        assert built_in not in dump, built_in


def test_plain_dump_replays_with_psql_into_a_fresh_server(source, target, tmp_path) -> None:
    dump = tmp_path / "dump.sql"
    out = _run(_tool("pg_dump"), *_where(source), "-f", str(dump), "hatidata", text=True)
    assert out.returncode == 0, out.stderr
    restored = _run(
        _tool("psql"), *_where(target), "hatidata", "-v", "ON_ERROR_STOP=1", "-q",
        "-f", str(dump), text=True,
    )  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    assert "ERROR" not in restored.stderr, restored.stderr
    assert _state(target) == _state(source)
    assert _after_restore_inserts(target) == [(4, 7)]


def test_custom_dump_restores_with_pg_restore_into_a_fresh_server(
    source, target, tmp_path: Path
) -> None:
    archive = tmp_path / "dump.fc"
    out = _run(_tool("pg_dump"), "-Fc", *_where(source), "-f", str(archive), "hatidata")
    assert out.returncode == 0, out.stderr
    listed = _run(_tool("pg_restore"), "-l", str(archive), text=True)
    assert "TABLE DATA public items" in listed.stdout, listed.stdout
    restored = _run(
        _tool("pg_restore"), "-v", "--exit-on-error", *_where(target), "-d", "hatidata",
        str(archive), text=True,
    )  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    assert "error" not in restored.stderr.lower(), restored.stderr
    assert _state(target) == _state(source)
    assert _after_restore_inserts(target) == [(4, 7)]


def test_custom_dump_restores_into_postgres_15(source, tmp_path: Path) -> None:
    """The dump is PostgreSQL's: pg_restore loads it into a real PostgreSQL 15 (roles
    differ there, so --no-owner, as users restore across servers) with the same rows."""
    from tests.differential.pgcluster import start_pg

    archive = tmp_path / "dump.fc"
    out = _run(_tool("pg_dump"), "-Fc", *_where(source), "-f", str(archive), "hatidata")
    assert out.returncode == 0, out.stderr
    pg = start_pg()
    try:
        restored = _run(
            _tool("pg_restore"), "--no-owner", "--exit-on-error", "-h", "127.0.0.1",
            "-p", str(pg.port), "-U", "postgres", "-d", "postgres", str(archive), text=True,
        )  # fmt: skip
        assert restored.returncode == 0, restored.stderr
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            got = {
                "items": conn.execute("SELECT id, name, price, stock FROM items ORDER BY id"),
                "notes": conn.execute(
                    "SELECT id, body, items_id, ratio, twice FROM notes ORDER BY id"
                ),
                "cheap": conn.execute("SELECT * FROM cheap ORDER BY id"),
                "item_names": conn.execute("SELECT * FROM item_names ORDER BY id"),
                "matviews": conn.execute(
                    "SELECT schemaname, matviewname, hasindexes, ispopulated FROM pg_matviews"
                ),
                "counter": conn.execute("SELECT last_value, is_called FROM counter_seq"),
                "macro": conn.execute("SELECT add_one(41)"),
            }
            got = {k: cur.fetchall() for k, cur in got.items()}
            # The default and CHECK came back as PostgreSQL's own division and modulo.
            assert conn.execute("INSERT INTO parts (id) VALUES (1) RETURNING qty").fetchall() == [
                (3,)
            ]
    finally:
        pg.stop()
    want = _state(source)
    assert got == {k: want[k] for k in got}


def test_sql_prepare_and_execute_as_pg_dump_sends_them(source) -> None:
    script = (
        "PREPARE by_id(pg_catalog.int4) AS SELECT name FROM items WHERE id = $1;\n"
        "EXECUTE by_id('2');\n"
        "EXECUTE by_id(1 + 2);\n"
        "PREPARE by_id(int) AS SELECT 1;\n"
        "EXECUTE by_id(1, 2);\n"
        "DEALLOCATE by_id;\n"
        "EXECUTE by_id(2);\n"
    )
    out = _run(_tool("psql"), *_where(source), "hatidata", "-At", input=script, text=True)
    assert out.stdout.split("\n")[:3] == ["PREPARE", "book", "it's"], out.stdout
    errors = [line for line in out.stderr.splitlines() if "ERROR" in line]
    assert errors == [
        'ERROR:  prepared statement "by_id" already exists',
        'ERROR:  wrong number of parameters for prepared statement "by_id"',
        'ERROR:  prepared statement "by_id" does not exist',
    ], out.stderr
    # EXECUTE through Parse/Bind runs the statement a simple-query PREPARE kept; a PREPARE
    # through Parse is refused with a hint (it would only be kept once executed)
    with _conn(source) as conn:
        psycopg.ClientCursor(conn).execute(
            "PREPARE by_name(text) AS SELECT id FROM items WHERE name = $1"
        )
        assert conn.execute("EXECUTE by_name('pen')").fetchall() == [(1,)]
        assert conn.execute("EXECUTE by_name(%s)", ["book"]).fetchall() == [(2,)]
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("PREPARE other(int) AS SELECT $1", prepare=True)
