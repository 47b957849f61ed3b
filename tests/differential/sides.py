"""Both sides of a differential test: PostgreSQL 15 and hatiproxy, set up alike."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg

if (_root := str(Path(__file__).resolve().parents[2])) not in sys.path:
    sys.path.append(_root)
from tests.conftest import ServerProcess, start_server  # noqa: E402
from tests.differential.pgcluster import start_pg  # noqa: E402


@contextlib.contextmanager
def pg_and_hatiproxy(tmp: Path, setup: list[str]) -> Iterator[tuple[str, str]]:
    """A PostgreSQL 15 cluster and an in-memory hatiproxy server, each after the same
    setup statements: their DSNs, both as user postgres."""
    srv = start_server(tmp, "--database", ":memory:")
    try:
        with pg_beside(srv, setup) as dsns:
            yield dsns
    finally:
        srv.stop()


@contextlib.contextmanager
def pg_beside(server: ServerProcess, setup: list[str]) -> Iterator[tuple[str, str]]:
    """A PostgreSQL 15 cluster beside a running hatiproxy server, both after the same
    setup statements: their DSNs, both as user postgres."""
    pg = start_pg()
    try:
        dsns = (pg.dsn, server.dsn.replace("user=tester", "user=postgres"))
        for dsn in dsns:
            with psycopg.connect(dsn, autocommit=True) as conn:
                for stmt in setup:
                    conn.execute(stmt)  # type: ignore[arg-type]
        yield dsns
    finally:
        pg.stop()


@contextlib.contextmanager
def connected_sides(tmp: Path, setup: list[str]) -> Iterator[list[psycopg.Connection]]:
    """pg_and_hatiproxy's two sides as open autocommit connections, PostgreSQL first."""
    with pg_and_hatiproxy(tmp, setup) as dsns:
        conns = [psycopg.connect(dsn, autocommit=True) for dsn in dsns]
        try:
            yield conns
        finally:
            for conn in conns:
                conn.close()
