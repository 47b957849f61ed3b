"""What the pg_dump round-trip tests share: PostgreSQL 15's client programs, filling a
server with a schema, a plain dump, and the dump's text without what differs by server."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import PgCluster, start_pg

BIN = Path("/usr/lib/postgresql/15/bin")


def pg_tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: apt-get install postgresql-client-15 (.ci/run does)")
    return str(path)


def fill(dsn: str, statements: Sequence[str]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]  # test SQL


def plain_dump(dsn: str) -> str:
    out = subprocess.run(
        [pg_tool("pg_dump"), "-Fp", "--no-owner", dsn], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def dump_body(dump: str) -> str:
    """The dump without what differs by server and run: the \\restrict key, the version
    line, the search_path setting and the public schema's entry."""
    dump = re.sub(r"\\(un)?restrict \S+", "", dump)
    dump = re.sub(r"-- Dumped from database version .*", "", dump)
    dump = re.sub(r"SELECT pg_catalog.set_config\('search_path'.*", "", dump)
    dump = re.sub(r"--\n-- Name: public; Type: SCHEMA;.*?initdb creates it\n", "", dump, flags=re.S)
    return re.sub(r"\n{3,}", "\n\n", dump)


@contextlib.contextmanager
def filled_pair(tmp: Path, schema: Sequence[str]) -> Iterator[tuple[ServerProcess, PgCluster]]:
    """An in-memory hatiproxy and a PostgreSQL 15 cluster, both filled with `schema`."""
    pg = start_pg()
    srv = start_server(tmp, "--database", ":memory:")
    try:
        for dsn in (pg.dsn, srv.dsn):
            fill(dsn, schema)
        yield srv, pg
    finally:
        srv.stop()
        pg.stop()


@contextlib.contextmanager
def replayed(tmp: Path, dump: str, env: dict[str, str] | None = None) -> Iterator[list[str]]:
    """`dump` replayed by `psql -v ON_ERROR_STOP=1 -f` into a fresh hatiproxy and a fresh
    PostgreSQL 15 (each must succeed): their DSNs, hatiproxy first."""
    path = tmp / "dump.sql"
    path.write_text(dump)
    target = start_server(tmp / "target", "--database", ":memory:")
    pg = start_pg()
    try:
        for dsn in (target.dsn, pg.dsn):
            out = subprocess.run(
                [pg_tool("psql"), dsn, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(path)],
                capture_output=True,
                text=True,
                timeout=180,
                env=env,
            )
            assert out.returncode == 0, out.stderr
        yield [target.dsn, pg.dsn]
    finally:
        target.stop()
        pg.stop()
