"""pgJDBC (Debian libpostgresql-jdbc-java): the programs in tests/java/ compiled and run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import psycopg
import pytest

JAR = Path("/usr/share/java/postgresql.jar")
SOURCES = sorted((Path(__file__).resolve().parent.parent / "java").glob("*.java"))


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("jdbc-classes")
    subprocess.run(
        ["javac", "-cp", str(JAR), "-d", str(out), *map(str, SOURCES)],
        check=True, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    return out


def run_java(classes: Path, program: str, url: str, table: str) -> list[str]:
    """Run one of the tests/java programs; it must end with "done". Its output lines."""
    r = subprocess.run(
        ["java", "-cp", f"{JAR}:{classes}", program, url, table],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "done"
    return lines


def run_client(classes: Path, url: str, table: str) -> dict[str, str]:
    lines = run_java(classes, "JdbcClient", url, table)
    assert sum(line.startswith("ok ") for line in lines) >= 48
    meta = {}
    for line in lines:
        if line.startswith("meta "):
            name, _, result = line[5:].partition(" ")
            meta[name] = result
    return meta


@pytest.mark.parametrize("extra", ["", "&sslmode=disable"], ids=["default", "sslmode-disable"])
def test_jdbc_core(server, classes, table_name, extra) -> None:
    url = (
        f"jdbc:postgresql://127.0.0.1:{server.port}/hatidata?user=tester&prepareThreshold=1{extra}"
    )
    meta = run_client(classes, url, table_name)
    assert meta["product"] == "PostgreSQL 15"


def test_jdbc_metadata_calls_run(server, classes, table_name) -> None:
    """getSchemas/getTables/getColumns answer without error. Their contents, and
    getPrimaryKeys (needs _pg_expandarray), depend on proxy/db/catalog: see the report."""
    url = f"jdbc:postgresql://127.0.0.1:{server.port}/hatidata?user=tester&prepareThreshold=1"
    meta = run_client(classes, url, table_name)
    for call in ("getSchemas", "getTables", "getColumns"):
        assert not meta[call].startswith("ERROR"), (call, meta[call])
    # label:getTableName:getBaseColumnName:isNullable, as pgJDBC gets them from PostgreSQL 15:
    # read from pg_class / pg_attribute by RowDescription's table oid and attnum
    assert meta["resultSetMetaData"] == f"id:{table_name}:id:0,who:{table_name}:name:1,next:::2"


def test_jdbc_autosave_always_keeps_the_transaction_after_errors(
    server, classes, table_name
) -> None:
    """autosave=always: SAVEPOINT before each statement, ROLLBACK TO after a failed one
    (after writes, so the replay of earlier writes must hold), and the block commits."""
    url = f"jdbc:postgresql://127.0.0.1:{server.port}/hatidata?user=tester&autosave=always"
    lines = run_java(classes, "JdbcAutosave", url, table_name)
    assert sum(line.startswith("ok ") for line in lines) == 12


# A schema with what a BI tool or IDE browses: keys, a foreign key with an action, unique
# and plain indexes, comments, a view, common column types.
METADATA_SCHEMA = [
    "CREATE SCHEMA {s}",
    "CREATE TABLE {s}.parent (id serial PRIMARY KEY, code varchar(10) NOT NULL UNIQUE, note text)",
    "CREATE TABLE {s}.child (id bigint PRIMARY KEY,"
    " parent_id integer NOT NULL REFERENCES {s}.parent(id) ON DELETE CASCADE,"
    " qty numeric(12,3), made timestamptz)",
    "CREATE INDEX child_made ON {s}.child (made)",
    "CREATE UNIQUE INDEX child_pq ON {s}.child (parent_id, qty)",
    "CREATE TABLE {s}.kinds (id integer PRIMARY KEY, b boolean, s smallint, f real,"
    " d double precision, dt date, ts timestamp, tm time, iv interval, u uuid, j jsonb, by bytea,"
    " arr integer[], big bigint NOT NULL DEFAULT 7, vc varchar(20), n numeric(7,2), ts3 timestamp(3),"
    " ch char(3), one char, uv varchar DEFAULT 'x', cv character varying)",
    "COMMENT ON TABLE {s}.parent IS 'parents'",
    "COMMENT ON COLUMN {s}.parent.code IS 'the code'",
    "CREATE VIEW {s}.v_parent AS SELECT id, note, code FROM {s}.parent",
    "CREATE VIEW {s}.v_kinds AS SELECT ch, uv, vc FROM {s}.kinds",
]


def test_jdbc_metadata_answers_as_postgresql(server, classes, table_name) -> None:
    """Every DatabaseMetaData call (tests/java/JdbcMetadata.java) gives the rows PostgreSQL
    15 gives for the same schema: tables, columns, keys, foreign keys both ways (pgJDBC
    joins pg_constraint.conindid for PK_NAME), indexes, type info, a result's metadata."""
    from tests.differential.pgcluster import start_pg

    schema = f"jm_{table_name}"
    pg = start_pg()
    try:
        outputs = []
        for port in (pg.port, server.port):
            host_port = f"127.0.0.1:{port}"
            with psycopg.connect(
                f"postgresql://postgres@{host_port}/postgres", autocommit=True
            ) as c:
                for stmt in METADATA_SCHEMA:
                    c.execute(stmt.format(s=schema))  # type: ignore[arg-type]
            url = f"jdbc:postgresql://{host_port}/postgres?user=postgres"
            lines = run_java(classes, "JdbcMetadata", url, schema)
            # relpages of a new index (PostgreSQL: its metapage) and a table's row type in
            # pg_type (getUDTs; hatiproxy has none) are not compared
            outputs.append([
                re.sub(r"\tPAGES=\d+", "", line) for line in lines
                if not line.startswith("getUDTs")
            ])  # fmt: skip
    finally:
        pg.stop()
    ours, theirs = outputs[1], outputs[0]
    assert any(line.startswith("getImportedKeys.child\tPKTABLE") for line in theirs)
    assert [x for x in ours if x not in theirs] == []
    assert [x for x in theirs if x not in ours] == []
    assert ours == theirs
