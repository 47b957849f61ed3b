"""inet_server_addr() / inet_server_port() / inet_client_addr() / inet_client_port(): the
connection's own addresses, as in PostgreSQL (NULL only over a Unix socket, which
hatiproxy does not listen on). Each connection sees its own."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(Path(tmp_path_factory.mktemp("inet")), "--database", ":memory:")
    try:
        yield srv
    finally:
        srv.stop()


def _ends(conn: psycopg.Connection) -> tuple[tuple[str, int], tuple[str, int]]:
    """(the client's end, the server's end) of the connection's socket."""
    sock = socket.socket(fileno=socket.dup(conn.pgconn.socket))
    try:
        return sock.getsockname()[:2], sock.getpeername()[:2]
    finally:
        sock.close()


def test_the_connections_own_addresses(server: ServerProcess) -> None:
    with (
        psycopg.connect(server.dsn, autocommit=True) as a,
        psycopg.connect(server.dsn, autocommit=True) as b,
    ):
        for conn in (a, b):
            client, srv = _ends(conn)
            row = conn.execute(
                "SELECT inet_server_addr(), inet_server_port(), inet_client_addr(), "
                "inet_client_port()"
            ).fetchone()
            assert row == (srv[0], srv[1], client[0], client[1])
        ports = [c.execute("SELECT inet_client_port()").fetchone() for c in (a, b)]
        assert ports[0] != ports[1]
        # integer, as PostgreSQL types the ports; and in FROM, as a one-row table
        assert a.execute("SELECT pg_typeof(inet_server_port())::text").fetchone() == ("integer",)
        assert a.execute("SELECT * FROM inet_client_port()").fetchone() == ports[0]
