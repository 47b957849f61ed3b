"""An extended-protocol DML whose Sync is already the next message commits on its own.

Drivers send one statement as Bind, Execute, Sync in one packet: its implicit block
would hold that statement alone, so the server runs it as an autocommit statement
(statement_start.plan) instead of a BEGIN first and a COMMIT at Sync. What the client
relies on must not move: statements up to one Sync still form one block (an error rolls
back the ones before it), a Sync that has not arrived yet keeps the block open, and a
failed statement leaves no aborted transaction behind.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import psycopg
import pytest

from proxy.wire.frontend import FrontendDecoder, Sync
from tests.conftest import ServerProcess
from tests.test_bad_input import Raw, error_fields, parse_backend, typed

_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")


def parse(sql: str, name: bytes = b"") -> bytes:
    return typed(b"P", name + b"\0" + sql.encode() + b"\0" + _I16.pack(0))


def bind(*values: str, name: bytes = b"") -> bytes:
    body = b"\0" + name + b"\0" + _I16.pack(0) + _I16.pack(len(values))
    for v in values:
        body += _I32.pack(len(v.encode())) + v.encode()
    return typed(b"B", body + _I16.pack(0))


EXECUTE = typed(b"E", b"\0" + _I32.pack(0))
SYNC = typed(b"S", b"")


def until_ready(raw: Raw, last: bytes = b"Z") -> list[tuple[bytes, bytes]]:
    """Messages up to and including the first `last` (ReadyForQuery)."""
    data = b""
    while True:
        msgs = parse_backend(data)
        if any(tag == last for tag, _ in msgs):
            return msgs
        chunk = raw.sock.recv(65536)
        assert chunk, "server closed the connection"
        data += chunk


@pytest.fixture
def table(server: ServerProcess, table_name: str) -> Iterator[str]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id integer PRIMARY KEY, v text)")
        yield table_name
        conn.execute(f"DROP TABLE {table_name}")


def _ids(server: ServerProcess, table: str) -> list[int]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        return [r[0] for r in conn.execute(f"SELECT id FROM {table} ORDER BY id")]


def test_decoder_sees_a_buffered_sync() -> None:
    dec = FrontendDecoder(in_startup=False)
    assert not dec.sync_next()
    dec.feed(EXECUTE + SYNC[:3])
    assert not dec.sync_next()  # Execute first
    assert dec.next_message() is not None
    assert not dec.sync_next()  # only part of the Sync is here
    dec.feed(SYNC[3:])
    assert dec.sync_next()
    assert isinstance(dec.next_message(), Sync)
    assert not dec.sync_next()


def test_statement_with_sync_next_commits_and_leaves_no_block(
    server: ServerProcess, table: str
) -> None:
    raw = Raw(server.port)
    raw.login()
    insert = parse(f"INSERT INTO {table} VALUES ($1, $2)")
    raw.sock.sendall(insert + bind("1", "one") + EXECUTE + SYNC)
    msgs = until_ready(raw)
    assert [t for t, _ in msgs] == [b"1", b"2", b"C", b"Z"]
    assert msgs[-1][1] == b"I"
    assert _ids(server, table) == [1]
    # A failing one (duplicate key): the error, an idle session, the next one runs.
    raw.sock.sendall(bind("1", "again") + EXECUTE + SYNC)
    msgs = until_ready(raw)
    assert error_fields(next(b for t, b in msgs if t == b"E"))["C"] == "23505"
    assert msgs[-1][1] == b"I"
    raw.sock.sendall(bind("2", "two") + EXECUTE + SYNC)
    msgs = until_ready(raw)
    assert [t for t, _ in msgs] == [b"2", b"C", b"Z"] and msgs[-1][1] == b"I"
    assert _ids(server, table) == [1, 2]
    raw.close()


def test_statements_before_one_sync_stay_one_block(server: ServerProcess, table: str) -> None:
    """The last INSERT (its Sync next) fails: the ones before it, in the same implicit
    block, roll back with it."""
    raw = Raw(server.port)
    raw.login()
    insert = parse(f"INSERT INTO {table} VALUES ($1, $2)")
    raw.sock.sendall(
        insert
        + bind("1", "a")
        + EXECUTE
        + bind("2", "b")
        + EXECUTE
        + bind("2", "c")
        + EXECUTE
        + SYNC
    )
    msgs = until_ready(raw)
    assert error_fields(next(b for t, b in msgs if t == b"E"))["C"] == "23505"
    assert _ids(server, table) == []
    raw.close()


def test_sync_not_yet_sent_keeps_the_block_open(server: ServerProcess, table: str) -> None:
    """Execute answered before its Sync arrives: other sessions do not see the row yet."""
    raw = Raw(server.port)
    raw.login()
    raw.sock.sendall(parse(f"INSERT INTO {table} VALUES ($1, $2)") + bind("7", "x") + EXECUTE)
    raw.sock.sendall(typed(b"H", b""))  # Flush: the answers so far, block still open
    assert [t for t, _ in until_ready(raw, last=b"C")] == [b"1", b"2", b"C"]
    assert _ids(server, table) == []
    raw.sock.sendall(SYNC)
    assert until_ready(raw)[-1][1] == b"I"
    assert _ids(server, table) == [7]
    raw.close()
