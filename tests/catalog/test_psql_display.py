"""What psql 15 shows a user on a server as shipped: pgvector's vector(n) for vector
columns, hnsw for HNSW indexes, none of the server's own relations or schemas, and
hatiproxy's functions (semantic SQL, hatiproxy_embed_column, the agent functions) with
their signatures."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.conftest import psql_command as psql

SETUP = [
    "CREATE TABLE docs (id serial PRIMARY KEY, body text NOT NULL, embedding vector(384))",
    "CREATE INDEX docs_body_idx ON docs (body)",
    "CREATE INDEX docs_emb_idx ON docs USING hnsw (embedding) WITH (metric = 'cosine')",
    "CREATE TABLE pts (id int, p vector(3))",
    "CREATE INDEX pts_p_idx ON pts USING hnsw (p)",  # DuckDB's default metric: l2sq
    "CREATE VIEW docs_v AS SELECT id, body FROM docs",
    "CREATE TABLE notes (id int, content text)",
    "INSERT INTO notes VALUES (1, 'hello')",
    "SELECT hatiproxy_embed_column('notes', 'content')",
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_server(
        tmp_path_factory.mktemp("psql-display"),
        "--database",
        ":memory:",
        "--embedding-provider",
        "hash",
    )
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
        # the server's own objects exist, so hiding them is tested
        conn.execute("SELECT * FROM store_memory('a memory')")
        conn.execute("SELECT * FROM branch_create('what-if')")
    yield server
    server.stop()


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


def has_lines(text: str, *wanted: str) -> None:
    got = lines(text)
    for line in wanted:
        assert line in got, f"{line!r} not in:\n{text}"


def no_internal_names(text: str) -> None:
    for word in ("_hatidata", "__hati", "hatidata_internal"):
        assert word not in text, f"{word} in:\n{text}"


def test_describe_table_shows_vector_and_hnsw(srv: ServerProcess) -> None:
    out = psql(srv, r"\d docs")
    has_lines(
        out,
        'Table "public.docs"',
        "embedding | vector(384) | | |",
        '"docs_pkey" PRIMARY KEY, btree (id)',
        '"docs_body_idx" btree (body)',
        '"docs_emb_idx" hnsw (embedding vector_cosine_ops)',
    )
    has_lines(psql(srv, r"\d pts"), "p | vector(3) | | |", '"pts_p_idx" hnsw (p vector_l2_ops)')
    # hatiproxy_embed_column's column and index
    has_lines(
        psql(srv, r"\d notes"),
        "content_embedding | vector(384) | | |",
        '"notes_content_embedding_hnsw" hnsw (content_embedding vector_cosine_ops)',
    )


def test_describe_index(srv: ServerProcess) -> None:
    out = psql(srv, r"\d docs_emb_idx")
    has_lines(
        out,
        'Index "public.docs_emb_idx"',
        "embedding | vector(384) | yes | embedding",
        'hnsw, for table "public.docs"',
    )
    has_lines(psql(srv, r"\d docs_body_idx"), 'btree, for table "public.docs"')


def test_list_indexes(srv: ServerProcess) -> None:
    # Owner: the login that created the table (tester, a trust login); see ownership.py
    out = psql(srv, r"\di")
    has_lines(
        out,
        "public | docs_body_idx | index | tester | docs",
        "public | docs_emb_idx | index | tester | docs",
        "public | docs_pkey | index | tester | docs",
        "public | notes_content_embedding_hnsw | index | tester | notes",
        "public | pts_p_idx | index | tester | pts",
        "(5 rows)",
    )
    no_internal_names(out)
    has_lines(
        psql(srv, r"\di+ docs_emb_idx"),
        "public | docs_emb_idx | index | tester | docs | permanent | hnsw | 0 bytes |",
    )


def test_list_tables_views_schemas_hide_the_servers_own(srv: ServerProcess) -> None:
    tables = psql(srv, r"\dt")
    has_lines(
        tables,
        "public | docs | table | tester",
        "public | notes | table | tester",
        "public | pts | table | tester",
        "(3 rows)",
    )
    no_internal_names(tables)
    views = psql(srv, r"\dv")
    has_lines(views, "public | docs_v | view | tester", "(1 row)")
    no_internal_names(views)
    schemas = psql(srv, r"\dn")
    has_lines(schemas, "public | pg_database_owner")
    no_internal_names(schemas)
    assert [ln for ln in lines(schemas) if ln.startswith("branch_")], schemas  # user-facing
    no_internal_names(psql(srv, r"\d"))
    no_internal_names(psql(srv, r"\dtS"))
    no_internal_names(psql(srv, r"\dvS"))


def test_list_functions_with_signatures(srv: ServerProcess) -> None:
    out = psql(srv, r"\df")
    has_lines(
        out,
        "public | semantic_match | boolean | col anyelement, search_text text, "
        "threshold double precision DEFAULT 0.7 | func",
        "public | semantic_rank | real | col anyelement, search_text text | func",
        "public | hatiproxy_embed_column | bigint | table_name text, column_name text | func",
        "public | branch_query | TABLE(row json) | branch_id text, sql text | func",
        "public | branch_merge | TABLE(branch_id text, status text, strategy text, merged_at "
        "timestamp with time zone, tables json) | branch_id text, strategy text DEFAULT "
        "'branch_wins'::text | func",
        "public | delete_trigger | TABLE(trigger_id uuid, status text, deleted boolean) | "
        "trigger_id text | func",
    )
    search = next(ln for ln in lines(out) if ln.startswith("public | search_memory |"))
    assert "query text, top_k bigint DEFAULT 10," in search, search
    has_lines(
        psql(srv, r"\df semantic*"),
        "public | semantic_match | boolean | col anyelement, search_text text, "
        "threshold double precision DEFAULT 0.7 | func",
        "(2 rows)",
    )
    described = psql(srv, r"\df+ branch_query")
    assert "Run SQL inside a branch" in described, described


def test_catalog_reports_vector_columns(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn) as conn:
        row = conn.execute(
            "SELECT data_type, udt_schema, udt_name FROM information_schema.columns "
            "WHERE table_name = 'docs' AND column_name = 'embedding'"
        ).fetchone()
        assert row == ("USER-DEFINED", "public", "vector")
        row = conn.execute(
            "SELECT format_type(atttypid, atttypmod), atttypmod FROM pg_attribute "
            "WHERE attrelid = 'docs'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert row == ("vector(384)", 384)
        amname = conn.execute(
            "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam "
            "WHERE c.relname = 'docs_emb_idx'"
        ).fetchone()
        assert amname == ("hnsw",)
        # the values travel as pgvector's vector: its text form, without an adapter
        conn.execute("INSERT INTO pts VALUES (1, '[1,2,3]')")
        cur = conn.execute("SELECT p FROM pts")
        assert cur.description[0].type_code == 16400
        assert cur.fetchone() == ("[1,2,3]",)
