"""Built-ins of transpiler/pg_functions_more.py and 83_pg_functions_more.sql against a real
server: the SQLSTATE and words of their errors (the differential cases,
tests/differential/cases/pg_functions_more.sql, compare results and SQLSTATE classes with
PostgreSQL 15), a file database's size, and the network types hatiproxy lacks (0A000,
never an extension download)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.conftest import start_server

# (statement, SQLSTATE, PostgreSQL's message) -- the words are PostgreSQL 15's
ERRORS = (
    ("SELECT get_byte('abc'::bytea, 3)", "2202E", "index 3 out of valid range, 0..2"),
    ("SELECT set_byte('abc'::bytea, -1, 0)", "2202E", "index -1 out of valid range, 0..2"),
    ("SELECT pg_database_size('nosuch')", "3D000", 'database "nosuch" does not exist'),
    (
        "SELECT has_sequence_privilege('nosuch', 'USAGE')",
        "42P01",
        'relation "nosuch" does not exist',
    ),
    ("SELECT div(1, 0)", "22012", "division by zero"),
    (
        "SELECT '{\"a\": 1}'::jsonb - 0",
        "22023",
        "cannot delete from object using integer index",
    ),
    ("SELECT '1'::jsonb - 0", "22023", "cannot delete from scalar"),
    (
        "SELECT substring('abc'::bytea from 1 for -1)",
        "22011",
        "negative substring length not allowed",
    ),
    ("SELECT unistr('\\q')", "42601", "invalid Unicode escape"),
    ("SELECT unistr('\\D83D')", "42601", "invalid Unicode surrogate pair"),
)
# hatiproxy's own limits: 0A000 naming what is missing
UNSUPPORTED = (
    ("SELECT inet '192.168.0.1'", "type inet is not supported"),
    ("SELECT host('10.0.0.1/8'::inet)", "type inet is not supported"),
    ("CREATE TABLE nets (n inet)", "type inet is not supported"),
    ("SELECT '10.0.0.0/8'::cidr", "type cidr is not supported"),
    ("SELECT '08:00:2b:01:02:03'::macaddr", "type macaddr is not supported"),
    ("SELECT array_dims(ARRAY[[1], [2]])", "array_dims of a multidimensional array"),
    ("SELECT array_fill(0, ARRAY[2, 2])", "array_fill of more than one dimension"),
    ("SELECT jsonb_path_exists('{}', '$.a.**')", "jsonpath '.**' is not supported"),
    ("SELECT jsonb_path_query_first('[1]', 'strict $[5]')", "jsonpath 'strict $[5]' is not"),
    (
        "SELECT jsonb_path_query_array('[1]', '$[*] ? (@ > 1 && @ < 3)')",
        "jsonpath ' ? (@ > 1 && @ < 3)' is not supported",
    ),
)


def _error(conn: psycopg.Connection, sql: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)
    return info.value


def test_errors_words_sizes_and_network_types(tmp_path: Path) -> None:
    srv = start_server(tmp_path)  # a database file: pg_database_size is its bytes
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            for sql, state, words in ERRORS:
                err = _error(conn, sql)
                assert (err.sqlstate, err.diag.message_primary) == (state, words), sql
            for sql, words in UNSUPPORTED:
                err = _error(conn, sql)
                assert err.sqlstate == "0A000", sql
                assert (err.diag.message_primary or "").startswith(words), sql
            conn.execute("CREATE TABLE sized AS SELECT range AS i FROM range(100000)")
            conn.execute("CHECKPOINT")
            size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
            assert size > 100000  # the table's blocks are in the file
            by_oid = conn.execute("SELECT pg_database_size(oid) FROM pg_database").fetchone()[0]
            assert by_oid == size
    finally:
        srv.stop()
