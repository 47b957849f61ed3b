"""A portal run in pieces (Execute with a row limit) ends with the count of its last
Execute, as PostgreSQL 15 says it: postgres.js's `.cursor()` calls back once per
CommandComplete with a nonzero count, so a total there gave it an empty last batch."""

from __future__ import annotations

import socket
import struct

from tests.conftest import ServerProcess
from tests.differential.pgcluster import start_pg


def _msg(tag: bytes, body: bytes) -> bytes:
    return tag + struct.pack("!i", len(body) + 4) + body


def _cstr(s: str) -> bytes:
    return s.encode() + b"\0"


def _exchange(port: int, sql: str, limit: int, executes: int) -> list[str]:
    """Parse / Bind once, then `executes` Executes of `limit` rows each and a Sync: the
    messages back, D for a row, s for PortalSuspended, C's tag."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    body = struct.pack("!i", 196608) + _cstr("user") + _cstr("postgres")
    body += _cstr("database") + _cstr("postgres") + b"\0"
    sock.sendall(struct.pack("!i", len(body) + 4) + body)
    buf, out = b"", []

    def until_ready() -> list[tuple[bytes, bytes]]:
        nonlocal buf
        got = []
        while True:
            while len(buf) < 5 or len(buf) < 1 + struct.unpack("!i", buf[1:5])[0]:
                chunk = sock.recv(65536)
                assert chunk
                buf += chunk
            n = struct.unpack("!i", buf[1:5])[0]
            tag, data, buf = buf[:1], buf[5 : 1 + n], buf[1 + n :]
            got.append((tag, data))
            if tag == b"Z":
                return got

    until_ready()
    bind = _cstr("") + _cstr("") + struct.pack("!hhh", 0, 0, 0)
    execute = _msg(b"E", _cstr("") + struct.pack("!i", limit))
    sock.sendall(
        _msg(b"P", _cstr("") + _cstr(sql) + struct.pack("!h", 0))
        + _msg(b"B", bind)
        + execute * executes
        + _msg(b"S", b"")
    )
    for tag, data in until_ready():
        if tag == b"C":
            out.append(data.rstrip(b"\0").decode())
        elif tag in (b"D", b"s", b"E"):
            out.append(tag.decode())
    sock.sendall(_msg(b"X", b""))
    sock.close()
    return out


def test_last_execute_counts_its_own_rows(server: ServerProcess) -> None:
    sql = "SELECT x FROM (VALUES (1), (2), (3)) AS t(x)"
    cases = [(1, 4), (2, 2), (0, 1)]  # one row at a time, two, all at once
    pg = start_pg()
    try:
        theirs = [_exchange(pg.port, sql, limit, n) for limit, n in cases]
    finally:
        pg.stop()
    ours = [_exchange(server.port, sql, limit, n) for limit, n in cases]
    assert theirs[0] == ["D", "s", "D", "s", "D", "s", "SELECT 0"]
    assert theirs[1] == ["D", "D", "s", "D", "SELECT 1"]
    assert ours == theirs
