"""Hostile and broken clients over raw sockets against a real server process.

Each case: the offender gets an ErrorResponse with the expected SQLSTATE (when
a reply is possible) and is disconnected; a second client, connected for the
whole module, keeps answering queries; the server log shows no crash; and the
server's memory stays bounded after hundreds of hostile connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from proxy.app import App as Server
from proxy.core.config import Config
from proxy.pgserver import server as server_mod
from tests.conftest import start_server

I32 = struct.Struct("!i")
SSL_REQUEST = I32.pack(8) + I32.pack(80877103)
IO_TIMEOUT = 10.0


def i32(n: int) -> bytes:
    return I32.pack(n)


def typed(tag: bytes, body: bytes) -> bytes:
    return tag + i32(len(body) + 4) + body


def untyped(body: bytes) -> bytes:
    return i32(len(body) + 4) + body


def startup_packet(params: dict[str, str] | None = None) -> bytes:
    params = params or {"user": "tester", "database": "hatidata"}
    body = i32(196608) + b"".join(
        k.encode() + b"\0" + v.encode() + b"\0" for k, v in params.items()
    )
    return i32(len(body) + 5) + body + b"\0"


def parse_backend(data: bytes) -> list[tuple[bytes, bytes]]:
    out, pos = [], 0
    while pos + 5 <= len(data):
        (length,) = I32.unpack_from(data, pos + 1)
        if pos + 1 + length > len(data):
            break
        out.append((data[pos : pos + 1], data[pos + 5 : pos + 1 + length]))
        pos += 1 + length
    return out


def error_fields(body: bytes) -> dict[str, str]:
    return {p[:1].decode(): p[1:].decode() for p in body.split(b"\0") if p}


class Raw:
    """A raw client socket; `finish()` reads until the server closes or goes quiet."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT)

    def login(self) -> None:
        self.sock.sendall(startup_packet())
        data = b""
        while not any(tag == b"Z" for tag, _ in parse_backend(data)):
            chunk = self.sock.recv(65536)
            assert chunk, "server closed during login"
            data += chunk

    def finish(
        self, quiet: float = IO_TIMEOUT, skip: int = 0
    ) -> tuple[list[tuple[bytes, bytes]], bool]:
        """All messages until EOF (closed=True) or `quiet` seconds of silence.

        `skip`: leading single bytes that are not messages (SSLRequest answers).
        """
        data, closed = b"", False
        self.sock.settimeout(quiet)
        try:
            while chunk := self.sock.recv(65536):
                data += chunk
            closed = True
        except TimeoutError:
            pass
        except ConnectionResetError:
            closed = True
        assert data[:skip] == b"N" * skip, data
        return parse_backend(data[skip:]), closed

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def witness(server) -> Iterator[psycopg.Connection]:  # noqa: ANN001 - conftest fixture
    """A well-behaved client connected for the whole module."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bad_input_witness (n int)")
        yield conn


def assert_alive(witness: psycopg.Connection) -> None:
    witness.execute("INSERT INTO bad_input_witness VALUES (1)")
    assert witness.execute("SELECT count(*) > 0, 6 * 7 FROM bad_input_witness").fetchone() == (
        True,
        42,
    )


def log_tail(server) -> int:  # noqa: ANN001
    return len(server.log())


def assert_no_crash(server, since: int) -> None:  # noqa: ANN001
    new = server.log()[since:]
    assert "Traceback" not in new and "crashed" not in new, new


# (name, bytes before login or None to skip login, bytes after login, expected SQLSTATE)
FATAL_CASES = [
    ("garbage_startup", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", None, "08P01"),
    ("startup_negative_length", i32(-5) + b"xxxx", None, "08P01"),
    ("startup_length_over_1gib", i32(2**30 + 1) + i32(196608), None, "08P01"),
    ("startup_unterminated_params", untyped(i32(196608) + b"user\0bo"), None, "08P01"),
    (
        "startup_invalid_utf8",
        untyped(i32(196608) + b"user\0tester\0application_name\0\xc3\x28\0\0"),
        None,
        "22021",
    ),
    ("ssl_request_twice", SSL_REQUEST + SSL_REQUEST, None, "08P01"),
    ("query_before_startup", typed(b"Q", b"SELECT 1\0"), None, "08P01"),
    # Postgres rejects an unknown type on its first byte: no length, no body awaited.
    ("unknown_message_type", None, b"z", "08P01"),
    ("unknown_type_promising_a_body", None, b"z" + i32(100_000), "08P01"),
    ("negative_length", None, b"Q" + i32(-1), "08P01"),
    ("length_below_minimum", None, b"Q" + i32(2), "08P01"),
    ("length_over_1gib", None, b"Q" + i32(2**30 + 5), "08P01"),
    # Over the decoder's 256 MiB bound for Query/Parse/Bind/CopyData.
    ("length_over_limit", None, b"P" + i32(256 * 1024 * 1024 + 1), "08P01"),
    # Sync, Execute, Describe... carry no data: bounded at 10000 bytes, as in Postgres.
    ("small_message_over_limit", None, b"S" + i32(10_001), "08P01"),
    ("password_after_login", None, typed(b"p", b"x\0"), "08P01"),
]


@pytest.mark.parametrize(
    ("name", "before", "after", "sqlstate"), FATAL_CASES, ids=[c[0] for c in FATAL_CASES]
)
def test_offender_gets_error_and_is_dropped(
    server,  # noqa: ANN001
    witness: psycopg.Connection,
    name: str,
    before: bytes | None,
    after: bytes | None,
    sqlstate: str,
) -> None:
    since = log_tail(server)
    raw = Raw(server.port)
    try:
        if before is None:
            raw.login()
        else:
            raw.sock.sendall(before)
        if after is not None:
            raw.sock.sendall(after)
        msgs, closed = raw.finish(skip=int((before or b"").startswith(SSL_REQUEST)))
    finally:
        raw.close()
    errors = [error_fields(body) for tag, body in msgs if tag == b"E"]
    assert closed, f"{name}: server kept the connection open; got {msgs}"
    assert len(errors) == 1, f"{name}: expected one ErrorResponse, got {msgs}"
    assert errors[0]["C"] == sqlstate and errors[0]["S"] == "FATAL", errors[0]
    assert_alive(witness)
    assert_no_crash(server, since)


@pytest.mark.parametrize(
    "partial",
    [
        b"\0\0",  # half a startup length
        startup_packet()[:11],  # half a startup packet
        "LOGIN",  # logs in, then half a message header
        "LOGIN-BODY",  # logs in, then a header promising more than is sent
    ],
    ids=["startup_len", "startup_body", "msg_header", "msg_body"],
)
def test_client_that_sends_half_and_vanishes(
    server,  # noqa: ANN001
    witness: psycopg.Connection,
    partial: bytes | str,
) -> None:
    since = log_tail(server)
    for _ in range(5):
        raw = Raw(server.port)
        if isinstance(partial, str):
            raw.login()
            raw.sock.sendall(b"Q\0\0" if partial == "LOGIN" else b"Q" + i32(1000) + b"SELECT")
        else:
            raw.sock.sendall(partial)
        raw.close()
        assert_alive(witness)
    time.sleep(0.3)  # let the server notice the EOFs before reading its log
    assert_no_crash(server, since)


def test_silent_clients_do_not_take_slots(server, witness: psycopg.Connection) -> None:  # noqa: ANN001
    """Clients that connect and say nothing: others still connect and query."""
    silent = [Raw(server.port) for _ in range(30)]
    try:
        assert_alive(witness)
        with psycopg.connect(server.dsn, connect_timeout=5) as fresh:
            assert fresh.execute("SELECT 'still here'").fetchone() == ("still here",)
    finally:
        for raw in silent:
            raw.close()


def test_recoverable_errors_keep_the_connection(server, witness: psycopg.Connection) -> None:  # noqa: ANN001
    """Errors in well-formed messages are ERRORs: the session goes on after Sync."""
    raw = Raw(server.port)
    try:
        raw.login()
        missing = typed(b"B", b"\0nope\0" + b"\0\0" * 3)
        sync = typed(b"S", b"")
        # Bind with 32767 parameters to a 1-parameter statement.
        parse = typed(b"P", b"one\0SELECT $1::int + 1\0\0\0")
        many = b"\0one\0\0\0" + struct.pack("!h", 32767) + i32(1) + b"7"
        many += (i32(1) + b"7") * 32766 + b"\0\0"
        raw.sock.sendall(missing + sync + parse + sync + typed(b"B", many) + sync)
        raw.sock.sendall(typed(b"Q", b"SELECT 41 + 1\0"))
        msgs, closed = raw.finish(quiet=2)
    finally:
        raw.close()
    assert not closed
    errors = [error_fields(body)["C"] for tag, body in msgs if tag == b"E"]
    assert errors == ["26000", "08P01"], msgs
    assert [tag for tag, _ in msgs].count(b"Z") == 4
    assert (b"D", b"\0\x01" + i32(2) + b"42") in msgs
    assert_alive(witness)


S = typed(b"S", b"")
BIND_TEXT = typed(b"P", b"\0SELECT $1::text\0\0\0")


def bind1(value: bytes, fmt: int = 0, portal: bytes = b"") -> bytes:
    return typed(b"B", portal + b"\0\0\0\x01\0" + bytes([fmt]) + b"\0\x01" + i32(len(value)) + value
                 + b"\0\0")  # fmt: skip


# Correctly framed messages with bad content: Postgres answers an ERROR and the
# session goes on. (name, bytes sent after login, then "SELECT 7" to show it is alive.)
RECOVERABLE_CASES = [
    ("invalid_utf8_query", typed(b"Q", b"SELECT '\xff\xfe'\0")),
    ("truncated_utf8_query", typed(b"Q", b"SELECT 'a\xc3\x28'\0")),
    ("invalid_utf8_parse", typed(b"P", b"\0SELECT '\xff'\0\0\0") + S),
    ("invalid_utf8_statement_name", typed(b"P", b"\xff\0SELECT 1\0\0\0") + S),
    ("invalid_utf8_bind_text", BIND_TEXT + bind1(b"\xe2\x82") + typed(b"E", b"\0" + i32(0)) + S),
    ("nul_in_bind_text", BIND_TEXT + bind1(b"a\0b") + S),
    ("invalid_utf8_bind_binary", BIND_TEXT + bind1(b"\xff", fmt=1) + S),
    ("invalid_utf8_named_portal", BIND_TEXT + bind1(b"\xff", portal=b"cur") + S),
    ("invalid_utf8_describe", typed(b"D", b"S\xff\0") + S),
    ("invalid_utf8_execute", typed(b"E", b"\xff\0" + i32(0)) + S),
    ("unterminated_query_string", typed(b"Q", b"SELECT 1")),
    ("trailing_bytes_in_query", typed(b"Q", b"SELECT 1\0junk")),
    ("trailing_bytes_in_sync", typed(b"S", b"junk")),
    ("truncated_bind_fields", BIND_TEXT + typed(b"B", b"\0\0" + b"\0\x01") + S),
    ("negative_bind_param_length", BIND_TEXT + typed(b"B", b"\0\0\0\0\0\x01" + i32(-7) + b"\0\0") + S),
    ("bad_describe_kind", typed(b"D", b"Q\0") + S),
    ("bad_close_kind", typed(b"C", b"Q\0") + S),
    ("error_inside_transaction", typed(b"Q", b"BEGIN\0") + typed(b"Q", b"SELECT '\xff'\0")
     + typed(b"Q", b"ROLLBACK\0")),  # fmt: skip
]  # fmt: skip


def exchange(
    port: int, user: str, payload: bytes
) -> tuple[list[dict[str, str]], list[bytes], bool]:
    """Log in, send `payload` then a query; (error fields, ReadyForQuery states, closed)."""
    raw = Raw(port)
    try:
        raw.sock.sendall(startup_packet({"user": user, "database": "postgres"}))
        data = b""
        while not any(tag == b"Z" for tag, _ in parse_backend(data)):
            chunk = raw.sock.recv(65536)
            assert chunk, "server closed during login"
            data += chunk
        raw.sock.sendall(payload + typed(b"Q", b"SELECT 7\0"))
        msgs, closed = raw.finish(quiet=1.5)
    finally:
        raw.close()
    errors = [error_fields(body) for tag, body in msgs if tag == b"E"]
    for e in errors:  # server-specific fields: source file, line, routine
        for key in ("F", "L", "R"):
            e.pop(key, None)
    states = [body for tag, body in msgs if tag == b"Z"]
    assert (b"D", b"\0\x01" + i32(1) + b"7") in msgs, (msgs, closed)
    return errors, states, closed


@pytest.fixture(scope="module")
def postgres() -> Iterator[int]:
    from tests.differential.pgcluster import start_pg

    cluster = start_pg()
    yield cluster.port
    cluster.stop()


@pytest.mark.parametrize(
    "payload", [c[1] for c in RECOVERABLE_CASES], ids=[c[0] for c in RECOVERABLE_CASES]
)
def test_bad_content_is_an_error_like_postgres(
    server,  # noqa: ANN001
    postgres: int,
    witness: psycopg.Connection,
    payload: bytes,
) -> None:
    since = log_tail(server)
    pg = exchange(postgres, "postgres", payload)
    ours = exchange(server.port, "tester", payload)
    assert not pg[2] and not ours[2], (pg, ours)
    assert ours[1] == pg[1]  # the same ReadyForQuery states (I, T, E)
    assert [e["S"] for e in ours[0]] == [e["S"] for e in pg[0]] == ["ERROR"] * len(pg[0])
    assert [e["C"] for e in ours[0]] == [e["C"] for e in pg[0]]
    # The messages match where they concern encoding (the rest are worded alike, not equal).
    for a, b in zip(ours[0], pg[0], strict=True):
        if a["C"] == "22021":
            assert a == b
    assert_alive(witness)
    assert_no_crash(server, since)


def test_big_message_is_not_stalled_by_backpressure(server) -> None:  # noqa: ANN001
    """A message larger than the read-ahead bound (1 MiB) is read to its end."""
    s = "x" * 3_000_000
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT length('" + s + "')").fetchone() == (len(s),)
        assert conn.execute("SELECT length(%s)", [s]).fetchone() == (len(s),)


def test_flooding_client_is_throttled_not_buffered(server, witness: psycopg.Connection) -> None:  # noqa: ANN001
    """A client that pipelines queries and never reads the answers stalls itself.

    The server stops writing when the client's socket is full, then stops reading once
    a bounded amount of input is queued: the client's send blocks instead of the
    server's memory growing. Closing the socket frees everything.
    """
    raw = Raw(server.port)
    raw.login()
    batch = typed(b"Q", b"SELECT repeat('x', 4000)\0") * 2000  # about 4 kB out per 40 in
    before = _rss_kb(server.proc.pid)
    raw.sock.settimeout(3.0)
    sent = 0
    with contextlib.suppress(TimeoutError):
        while sent < 400_000_000:
            raw.sock.sendall(batch)
            sent += len(batch)
    grown_kb = _rss_kb(server.proc.pid) - before
    assert sent < 100_000_000, f"the server kept reading: {sent} bytes accepted"
    assert grown_kb < 64 * 1024, f"RSS grew {grown_kb} kB while the client did not read"
    raw.close()
    assert_alive(witness)


def test_client_gone_mid_query_frees_its_backend(tmp_path: Path) -> None:
    """A client that closes its socket while its statement runs: the statement is
    interrupted and the connection slot freed at once, not when the query would end."""
    srv = start_server(tmp_path, "--database", ":memory:", "--max-connections", "2")
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as keeper:
            raw = Raw(srv.port)
            raw.login()
            raw.sock.sendall(
                typed(b"Q", b"SELECT count(*) FROM range(1000000000000) t(a) WHERE a % 7 = 3\0")
            )
            time.sleep(0.5)  # the statement is running on a worker thread now
            raw.close()
            deadline = time.monotonic() + 5
            while True:  # the slot is free once the interrupted statement has unwound
                try:
                    with psycopg.connect(srv.dsn, autocommit=True) as second:
                        assert second.execute("SELECT 1").fetchone() == (1,)
                    break
                except psycopg.OperationalError as exc:
                    assert "too many clients" in str(exc)
                    assert time.monotonic() < deadline, "the abandoned statement kept its slot"
                    time.sleep(0.2)
            assert keeper.execute("SELECT 2").fetchone() == (2,)
    finally:
        srv.stop()


def test_many_bind_parameters_work(server) -> None:  # noqa: ANN001
    """32767 parameters is the most a signed 16-bit count carries."""
    n = 32767
    sql = "SELECT 5 = ANY(ARRAY[" + ",".join(["%s"] * n) + "]::int[])"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute(sql, list(range(n))).fetchone() == (True,)  # type: ignore[arg-type]


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


# 200 hostile connections may grow the server's RSS by at most this much: all
# their buffers and tasks must be freed (allocator slack and caches stay below it).
RSS_BOUND_KB = 40 * 1024


def test_memory_bounded_after_hostile_clients(server, witness: psycopg.Connection) -> None:  # noqa: ANN001
    payloads = [
        b"\x16\x03\x01\x02\x00" + b"\x01" * 400,  # a TLS ClientHello at a non-TLS port
        b"GET / HTTP/1.1\r\n\r\n",
        startup_packet() + b"Q" + i32(2**30 + 5),
        startup_packet() + b"z" + i32(200_000_000),  # unknown type promising 200 MB
        startup_packet() + typed(b"Q", b"SELECT '" + b"x" * 200_000),  # unterminated, 200 kB
        startup_packet() + b"d" + i32(5_000_000) + b"y" * 300_000,  # half of a big message
    ]

    async def hostile(i: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        with contextlib.suppress(ConnectionError):
            writer.write(payloads[i % len(payloads)])
            await writer.drain()
            await asyncio.wait_for(reader.read(4096), 1.0)
        with contextlib.suppress(TimeoutError, ConnectionError):
            writer.close()
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def wave(count: int) -> None:
        for start in range(0, count, 25):
            await asyncio.gather(*(hostile(i) for i in range(start, start + 25)))

    asyncio.run(wave(50))  # warm-up: first-use allocations are not leaks
    time.sleep(0.5)
    before = _rss_kb(server.proc.pid)
    asyncio.run(wave(200))
    time.sleep(1.0)
    after = _rss_kb(server.proc.pid)
    assert after - before < RSS_BOUND_KB, f"RSS grew {before} -> {after} kB"
    assert_alive(witness)


# --- startup timeout: an in-process server with a short deadline ----------------------


def test_silent_clients_are_dropped_at_the_startup_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before the startup packet and during the password exchange alike."""
    monkeypatch.setattr(server_mod, "STARTUP_TIMEOUT_S", 0.5)

    async def scenario() -> None:
        srv = Server(
            Config(
                port=0,
                mcp_port=0,
                rest_port=0,
                database=":memory:",
                users="u:pw",
                data_dir=str(tmp_path),
            )
        )
        await srv.start()
        try:
            # 1. connects and sends nothing
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
            t0 = time.monotonic()
            assert await asyncio.wait_for(reader.read(), 5) == b""
            assert time.monotonic() - t0 < 3
            writer.close()
            # 2. sends the startup packet, then never answers the password challenge
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
            writer.write(startup_packet({"user": "u"}))
            t0 = time.monotonic()
            data = await asyncio.wait_for(reader.read(), 5)
            assert data[:1] == b"R"  # the SASL challenge, then EOF at the deadline
            assert time.monotonic() - t0 < 3
            writer.close()
        finally:
            await srv.close()
            srv.engine.close()

    asyncio.run(scenario())
