"""A connection keeps DuckDB's parse of the texts it runs again (pgserver/parsed_sql.py):
the same text must still follow every change between two runs of it: a table's new
columns, a parser option a PRAGMA changed, the rows of the agent that runs it."""

from __future__ import annotations

import duckdb
import psycopg
import pytest

from proxy.pgserver import parsed_sql


@pytest.mark.parametrize("prepare", [False, True])
def test_ddl_between_identical_texts_gives_the_new_shape(server, table_name, prepare) -> None:
    table_name += "_p" if prepare else ""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id integer PRIMARY KEY)")
        insert = f"INSERT INTO {table_name} (id) VALUES (%s)"
        select = f"SELECT * FROM {table_name} WHERE id >= %s ORDER BY id"
        for i in range(3):  # the texts' parses are kept now
            conn.execute(insert, (i,), prepare=False)
            assert [d.name for d in conn.execute(select, (0,), prepare=False).description] == ["id"]
        conn.execute(f"ALTER TABLE {table_name} ADD COLUMN note text DEFAULT 'n'")
        conn.execute(insert, (3,), prepare=False)
        cur = conn.execute(select, (2,), prepare=prepare)
        assert [d.name for d in cur.description] == ["id", "note"]
        assert cur.fetchall() == [(2, "n"), (3, "n")]
        conn.execute(f"DROP TABLE {table_name}")
        conn.execute(f"CREATE TABLE {table_name} (other text, id integer)")
        conn.execute(insert, (7,), prepare=False)
        cur = conn.execute(select, (0,), prepare=False)
        assert [d.name for d in cur.description] == ["other", "id"]
        assert cur.fetchall() == [(None, 7)]


def test_a_parser_option_applies_to_a_repeated_text(server) -> None:
    """preserve_identifier_case is applied when DuckDB parses: a kept parse made before
    the PRAGMA would still name the column as before. integer_division no longer matters
    to user SQL: the transpiler writes PostgreSQL's `/` as a macro (division.py)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        query = "SELECT 7 / 2 AS q, 1 AS MixedCase"
        for _ in range(3):
            cur = conn.execute(query)
            assert cur.fetchall() == [(3, 1)]
            assert [d.name for d in cur.description] == ["q", "MixedCase"]
        conn.execute("PRAGMA integer_division = false")
        conn.execute("PRAGMA preserve_identifier_case = false")
        try:
            cur = conn.execute(query)
            assert cur.fetchall() == [(3, 1)]
            assert [d.name for d in cur.description] == ["q", "mixedcase"]
        finally:
            conn.execute("PRAGMA preserve_identifier_case = true")
        assert [d.name for d in conn.execute(query).description] == ["q", "MixedCase"]


def test_the_same_text_on_two_agents_connections_reads_each_ones_rows(server) -> None:
    query = "SELECT content FROM _hatidata_agent_memory WHERE content LIKE %s ORDER BY content"
    conns = {a: server.agent_conn(f"parsed-{a}") for a in ("a", "b")}
    try:
        for agent, conn in conns.items():
            conn.execute(
                "SELECT memory_id FROM store_memory(%s, wait := true)", (f"parsed note {agent}",)
            )
        for _ in range(3):  # alternately, the same text on both connections
            for agent, conn in conns.items():
                rows = conn.execute(query, ("parsed note %",)).fetchall()
                assert rows == [(f"parsed note {agent}",)]
    finally:
        for conn in conns.values():
            conn.close()


def test_kept_parses_are_bounded_and_follow_the_generation() -> None:
    con = duckdb.connect()
    kept = parsed_sql.ParsedStatements()
    first = kept.query(con, "SELECT 1")
    assert isinstance(first, duckdb.Statement) and kept.query(con, "SELECT 1") is first
    assert con.execute(first).fetchall() == [(1,)]
    # several statements in one text, a text over the bound, a parse error: run as text
    assert kept.query(con, "SELECT 1; SELECT 2") == "SELECT 1; SELECT 2"
    long = "SELECT 1" + " " * parsed_sql.MAX_CHARS
    assert kept.query(con, long) == long
    assert kept.query(con, "SELEC oops") == "SELEC oops"
    assert len(kept) == 2  # "SELECT 1" and the two-statement text
    for i in range(parsed_sql.MAX_STATEMENTS * 2):
        kept.query(con, f"SELECT {i}")
    assert len(kept) == parsed_sql.MAX_STATEMENTS
    parsed_sql.note_statement("select")  # cannot change how DuckDB parses
    assert len(kept) == parsed_sql.MAX_STATEMENTS and kept.query(con, "SELECT 127") is not None
    parsed_sql.note_statement("other")  # a PRAGMA, SET, LOAD, ...: every parse dropped
    again = kept.query(con, "SELECT 1")
    assert again is not first and len(kept) == 1
