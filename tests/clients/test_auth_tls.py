"""Password authentication (SCRAM, md5, cleartext), TLS, and startup parameters."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Iterator

import asyncpg
import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.test_bad_input import error_fields, parse_backend, startup_packet, typed


def _dsn(srv: ServerProcess, password: str, **extra: str) -> str:
    parts = [f"host={srv.host} port={srv.port} user=alice dbname=hatidata password={password}"]
    parts += [f"{k}={v}" for k, v in extra.items()]
    return " ".join(parts)


@pytest.fixture(scope="module", params=["scram", "md5", "password"])
def auth_server(request, tmp_path_factory) -> Iterator[ServerProcess]:
    # bob's and carol's passwords: one SASLprep changes (no-break space), one it rejects.
    users = "alice:secret,bob:x\u00a0y,carol:key\U0001f511"
    args = ["--database", ":memory:", "--users", users]
    if request.param != "scram":
        args += ["--auth-method", request.param]
    srv = start_server(tmp_path_factory.mktemp(f"auth-{request.param}"), *args)
    srv.auth_method = request.param  # type: ignore[attr-defined]
    yield srv
    srv.stop()


def test_psycopg_right_and_wrong_password(auth_server) -> None:
    with psycopg.connect(_dsn(auth_server, "secret", sslmode="disable")) as conn:
        assert conn.execute("SELECT current_user IS NOT NULL, 1").fetchone() == (True, 1)
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(_dsn(auth_server, "wrong", sslmode="disable"))
    assert "28P01" in str(info.value) or "password authentication failed" in str(info.value)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(_dsn(auth_server, "secret", sslmode="disable").replace("alice", "mallory"))


def test_asyncpg_right_and_wrong_password(auth_server) -> None:
    async def main() -> None:
        kw = {"host": auth_server.host, "port": auth_server.port, "user": "alice",
              "database": "hatidata", "ssl": False}  # fmt: skip
        conn = await asyncpg.connect(password="secret", **kw)
        assert await conn.fetchval("SELECT 41 + 1") == 42
        await conn.close()
        with pytest.raises(asyncpg.InvalidPasswordError) as info:
            await asyncpg.connect(password="nope", **kw)
        assert info.value.sqlstate == "28P01"

    asyncio.run(main())


def test_non_ascii_passwords(auth_server) -> None:
    """libpq and asyncpg hash SASLprep(password) for SCRAM, or the raw password when SASLprep
    rejects it (emoji); md5 and cleartext send it raw. Each works as in PostgreSQL."""
    base = f"host={auth_server.host} port={auth_server.port} dbname=hatidata sslmode=disable"
    for user, password in (("bob", "x\u00a0y"), ("carol", "key\U0001f511")):
        with psycopg.connect(base, user=user, password=password) as conn:
            assert conn.execute("SELECT current_user").fetchone() == (user,)

    async def main() -> None:
        kw = {"host": auth_server.host, "port": auth_server.port, "database": "hatidata",
              "ssl": False}  # fmt: skip
        for user, password in (("bob", "x\u00a0y"), ("carol", "key\U0001f511")):
            conn = await asyncpg.connect(user=user, password=password, **kw)
            assert await conn.fetchval("SELECT current_user") == user
            await conn.close()

    asyncio.run(main())


def test_malformed_password_message_costs_only_that_connection(auth_server) -> None:
    """A broken SCRAM message (or unterminated md5/cleartext password): FATAL 08P01, as in
    PostgreSQL, for that client alone; the next login works."""
    scram = auth_server.auth_method == "scram"
    with socket.create_connection((auth_server.host, auth_server.port), timeout=10) as sock:
        sock.sendall(startup_packet({"user": "alice", "database": "hatidata"}))
        [(tag, request)] = parse_backend(sock.recv(65536))
        assert tag == b"R"
        if scram:
            assert request == b"\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00"
            first = b"n,,n=,r="  # an empty nonce
            body = b"SCRAM-SHA-256\x00" + struct.pack("!i", len(first)) + first
        else:
            body = b"no terminating NUL"
        sock.sendall(typed(b"p", body))
        data = b""
        while chunk := sock.recv(65536):  # the server answers, then closes
            data += chunk
    [(tag, fields)] = parse_backend(data)
    error = error_fields(fields)
    assert tag == b"E" and (error["S"], error["C"]) == ("FATAL", "08P01")
    if scram:
        assert error["M"] == "malformed SCRAM message"
    with psycopg.connect(_dsn(auth_server, "secret", sslmode="disable")) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory) -> Iterator[ServerProcess]:
    srv = start_server(
        tmp_path_factory.mktemp("tls"), "--database", ":memory:", "--tls-self-signed"
    )
    yield srv
    srv.stop()


def test_tls_required_connects_encrypted(tls_server) -> None:
    dsn = f"host={tls_server.host} port={tls_server.port} user=tester dbname=hatidata"
    with psycopg.connect(dsn + " sslmode=require") as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.execute("SELECT 'over tls'").fetchone() == ("over tls",)
    with psycopg.connect(dsn + " sslmode=disable") as conn:
        assert not conn.pgconn.ssl_in_use


def test_asyncpg_over_tls(tls_server) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(
            host=tls_server.host, port=tls_server.port, user="tester", database="hatidata",
            ssl="require",
        )  # fmt: skip
        try:
            assert conn.get_server_version().major == 15
            assert await conn.fetchval("SELECT $1::text", "secure") == "secure"
        finally:
            await conn.close()

    asyncio.run(main())


def test_no_tls_configured(server) -> None:
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.dsn + " sslmode=require")
    with psycopg.connect(server.dsn + " sslmode=prefer") as conn:
        assert not conn.pgconn.ssl_in_use
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_startup_options(server) -> None:
    opts = "-c hatidata_agent_id=a1 -c hatidata.environment=dev -c statement_timeout=5s"
    with psycopg.connect(server.dsn, options=opts, application_name="boot-app") as conn:
        assert conn.execute("SHOW hatidata_agent_id").fetchone() == ("a1",)
        assert conn.execute("SHOW hatidata.environment").fetchone() == ("dev",)
        assert conn.execute("SHOW application_name").fetchone() == ("boot-app",)
        assert conn.info.parameter_status("application_name") == "boot-app"
        conn.execute("SET application_name TO 'renamed'")
        assert conn.info.parameter_status("application_name") == "renamed"
        conn.execute("RESET application_name")
        assert conn.info.parameter_status("application_name") == "boot-app"


def test_connect_time_parameter_status(server) -> None:
    with psycopg.connect(server.dsn) as conn:
        ps = conn.info.parameter_status
        assert ps("server_version").startswith("15.")
        assert ps("server_encoding") == "UTF8" and ps("client_encoding") == "UTF8"
        assert ps("DateStyle").startswith("ISO")
        assert ps("integer_datetimes") == "on"
        assert ps("standard_conforming_strings") == "on"
        assert ps("TimeZone")
        assert conn.info.backend_pid > 0
