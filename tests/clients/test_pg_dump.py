"""pg_dump 15 against hatiproxy.

Its session preamble (SET statement_timeout, row_security, ..., SET TRANSACTION ISOLATION
LEVEL REPEATABLE READ, READ ONLY) is accepted, and so are the catalog queries it makes
before it reads indexes: extensions, schemas (tableoid, acldefault), types, functions
(pg_init_privs, pg_transform; proargtypes as an oidvector), FDWs and servers
(pg_options_to_table on a column), tables, LOCK TABLE on each, columns and defaults.
A full dump is not yet: pg_index.indkey goes out as an array ('{2}'), where pg_dump
reads int2vector's text ('2')."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

PG_DUMP = "/usr/lib/postgresql/15/bin/pg_dump"

pytestmark = pytest.mark.skipif(not os.path.exists(PG_DUMP), reason="pg_dump 15 not installed")

SCHEMA = """
CREATE TABLE items (id serial PRIMARY KEY, name varchar(40) NOT NULL, price numeric(10,2));
CREATE INDEX items_name_idx ON items (name);
CREATE SEQUENCE counter_seq;
CREATE VIEW cheap AS SELECT id, name FROM items WHERE price < 10;
COMMENT ON TABLE items IS 'things for sale';
INSERT INTO items (name, price) VALUES ('pen', 1.50), ('book', 12.00), ('it''s', NULL);
"""


@pytest.fixture(scope="module")
def dump_server(tmp_path_factory: pytest.TempPathFactory) -> ServerProcess:
    srv = start_server(tmp_path_factory.mktemp("pg_dump"), "--database", ":memory:")
    try:
        with psycopg.connect(
            host=srv.host, port=srv.port, user="x", dbname="hatidata", autocommit=True
        ) as conn:
            for statement in SCHEMA.strip().split(";\n"):
                conn.execute(statement)
        yield srv
    finally:
        srv.stop()


def _pg_dump(server: ServerProcess, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PG_DUMP, "-v", "-h", server.host, "-p", str(server.port), "-U", "x", "hatidata"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_pg_dump_reads_the_catalog_up_to_indexes(dump_server, tmp_path: Path) -> None:
    out = _pg_dump(dump_server, tmp_path)
    if out.returncode == 0:
        return
    # It got past the settings and the transaction ...
    assert "configuration parameter" not in out.stderr, out.stderr
    assert "Query was: SET" not in out.stderr, out.stderr
    # ... and through the schema, type, function, table and column queries, LOCK TABLE
    # included, to the indexes.
    for step in ("reading extensions", "reading schemas", "reading user-defined functions",
                 "reading user-defined foreign-data wrappers", "reading user-defined tables",
                 "reading column info for interesting tables",
                 "finding table default expressions", "reading indexes"):  # fmt: skip
        assert f"pg_dump: {step}" in out.stderr, out.stderr
    assert "LOCK TABLE" not in out.stderr, out.stderr
