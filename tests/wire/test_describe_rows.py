"""Describe answers what Execute then sends, for every statement kind (raw protocol).

node-postgres (and so knex) builds its row parser from the RowDescription of a portal
Describe and crashes on DataRows after NoData: each statement here is sent as Parse /
Bind / Describe (portal) / Execute / Sync, and as Parse / Describe (statement) / Sync,
over a real socket, and the two descriptions must agree with the rows that come."""

from __future__ import annotations

import socket
import struct

import pytest

from tests.conftest import ServerProcess


def _msg(tag: bytes, body: bytes) -> bytes:
    return tag + struct.pack("!i", len(body) + 4) + body


def _cstr(s: str) -> bytes:
    return s.encode() + b"\0"


class RawClient:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        body = struct.pack("!i", 196608) + _cstr("user") + _cstr("x")
        body += _cstr("database") + _cstr("hatidata") + b"\0"
        self.sock.sendall(struct.pack("!i", len(body) + 4) + body)
        self.buf = b""
        self.until_ready()

    def read(self) -> tuple[bytes, bytes]:
        while len(self.buf) < 5 or len(self.buf) < 1 + struct.unpack("!i", self.buf[1:5])[0]:
            chunk = self.sock.recv(65536)
            assert chunk, "server closed the connection"
            self.buf += chunk
        n = struct.unpack("!i", self.buf[1:5])[0]
        tag, body, self.buf = self.buf[:1], self.buf[5 : 1 + n], self.buf[1 + n :]
        return tag, body

    def until_ready(self) -> list[tuple[bytes, bytes]]:
        out = []
        while True:
            tag, body = self.read()
            out.append((tag, body))
            if tag == b"Z":
                return out

    def simple(self, sql: str) -> None:
        self.sock.sendall(_msg(b"Q", _cstr(sql)))
        errors = [b for t, b in self.until_ready() if t == b"E"]
        assert not errors, errors

    def extended(self, sql: str, params: list[str]) -> list[tuple[bytes, bytes]]:
        bind = _cstr("") + _cstr("") + struct.pack("!h", 0) + struct.pack("!h", len(params))
        for p in params:
            bind += struct.pack("!i", len(p.encode())) + p.encode()
        bind += struct.pack("!h", 0)
        self.sock.sendall(
            _msg(b"P", _cstr("") + _cstr(sql) + struct.pack("!h", 0))
            + _msg(b"B", bind)
            + _msg(b"D", b"P" + _cstr(""))
            + _msg(b"E", _cstr("") + struct.pack("!i", 0))
            + _msg(b"S", b"")
        )
        return self.until_ready()

    def describe_statement(self, sql: str) -> list[tuple[bytes, bytes]]:
        self.sock.sendall(
            _msg(b"P", _cstr("s1") + _cstr(sql) + struct.pack("!h", 0))
            + _msg(b"D", b"S" + _cstr("s1"))
            + _msg(b"C", b"S" + _cstr("s1"))
            + _msg(b"S", b"")
        )
        return self.until_ready()

    def close(self) -> None:
        self.sock.sendall(_msg(b"X", b""))
        self.sock.close()


def _fields(body: bytes) -> list[tuple[str, int]]:
    """(name, type oid) of each field of a RowDescription body."""
    (n,) = struct.unpack("!h", body[:2])
    out, pos = [], 2
    for _ in range(n):
        end = body.index(b"\0", pos)
        name = body[pos:end].decode()
        _table, _col, oid = struct.unpack("!ihi", body[end + 1 : end + 11])
        out.append((name, oid))
        pos = end + 19
    return out


def _data_width(body: bytes) -> int:
    return struct.unpack("!h", body[:2])[0]


SETUP = [
    "DROP TABLE IF EXISTS dr_items",
    "CREATE TABLE dr_items (id serial PRIMARY KEY, name varchar(50), qty integer, "
    "created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP, "
    "updated_at timestamp DEFAULT now())",
    "INSERT INTO dr_items (name, qty) VALUES ('a', 1), ('b', 2)",
]

# (statement, parameters, returns rows, the described column names or None: not checked)
CASES = [
    ("SELECT id, name FROM dr_items WHERE qty > $1", ["0"], True, ["id", "name"]),
    ("SELECT id FROM dr_items WHERE qty > $1", ["99"], True, ["id"]),  # no rows: still T
    ("INSERT INTO dr_items (name, qty) VALUES ($1, $2) RETURNING *", ["c", "3"], True,
     ["id", "name", "qty", "created_at", "updated_at"]),
    ("INSERT INTO dr_items (name) VALUES ($1) RETURNING id, created_at", ["d"], True,
     ["id", "created_at"]),
    ("INSERT INTO dr_items (name) VALUES ($1)", ["f"], False, []),
    ("UPDATE dr_items SET qty = qty + $1 WHERE name = $2 RETURNING id, qty, created_at",
     ["1", "a"], True, ["id", "qty", "created_at"]),
    ("UPDATE dr_items SET qty = $1 WHERE name = 'zz'", ["1"], False, []),
    ("DELETE FROM dr_items WHERE name = $1 RETURNING *", ["f"], True,
     ["id", "name", "qty", "created_at", "updated_at"]),
    ("DELETE FROM dr_items WHERE name = $1", ["nobody"], False, []),
    ("WITH x AS (SELECT qty FROM dr_items) SELECT count(*) FROM x WHERE qty >= $1", ["0"],
     True, ["count"]),
    ("VALUES (1, 'x')", [], True, None),  # names differ (col0: a known difference)
    ("SHOW TimeZone", [], True, None),
    ("SET search_path = public", [], False, []),
    ("CREATE TEMP TABLE dr_tmp (a int)", [], False, []),
]  # fmt: skip


@pytest.fixture
def client(server: ServerProcess):
    c = RawClient(server.port)
    for sql in SETUP:
        c.simple(sql)
    yield c
    c.close()


@pytest.mark.parametrize(("sql", "params", "rows", "names"), CASES, ids=[c[0] for c in CASES])
def test_portal_describe_matches_execute(client: RawClient, sql, params, rows, names) -> None:
    msgs = client.extended(sql, params)
    tags = [t for t, _ in msgs]
    assert b"E" not in tags, [b for t, b in msgs if t == b"E"]
    assert tags[:2] == [b"1", b"2"], tags  # ParseComplete, BindComplete
    if rows:
        assert tags[2] == b"T", f"Describe answered {tags[2]!r}, not RowDescription"
        fields = _fields(msgs[2][1])
        assert names is None or [f[0] for f in fields] == names
        widths = {_data_width(b) for t, b in msgs if t == b"D"}
        assert widths <= {len(fields)}, (widths, fields)
    else:
        assert tags[2] == b"n", f"Describe answered {tags[2]!r}, not NoData"
        assert b"D" not in tags


@pytest.mark.parametrize(("sql", "params", "rows", "names"), CASES, ids=[c[0] for c in CASES])
def test_statement_describe_matches_portal(client: RawClient, sql, params, rows, names) -> None:
    msgs = client.describe_statement(sql)
    tags = [t for t, _ in msgs]
    assert b"E" not in tags, [b for t, b in msgs if t == b"E"]
    assert tags[:2] == [b"1", b"t"], tags  # ParseComplete, ParameterDescription
    if rows:
        assert tags[2] == b"T", f"Describe answered {tags[2]!r}, not RowDescription"
        described = _fields(msgs[2][1])
        assert names is None or [f[0] for f in described] == names
        portal = client.extended(sql, params)
        assert _fields(next(b for t, b in portal if t == b"T")) == described
    else:
        assert tags[2] == b"n", f"Describe answered {tags[2]!r}, not NoData"
