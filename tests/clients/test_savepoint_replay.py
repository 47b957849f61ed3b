"""ROLLBACK TO SAVEPOINT after writes and after errors, with real drivers.

DuckDB has no subtransactions: the server rolls the transaction back and replays the
writes made before the savepoint, only when that is provably exact (proxy/pgserver/savepoints.py).
Each test checks the rows Postgres would leave, or the 0A000 refusal.
"""

from __future__ import annotations

import datetime as dt
import socket
import struct
import time
import urllib.request
from decimal import Decimal

import psycopg
import psycopg2
import psycopg2.errors
import pytest
import sqlalchemy as sa
from psycopg import errors
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from tests.conftest import start_server

REFUSED = "ROLLBACK TO SAVEPOINT cannot undo changes made after the savepoint"


def _rows(dsn: str, table: str) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()


@pytest.fixture
def table(server, table_name):
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, v text)")
    yield table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table_name}")


def test_plain_sql_rollback_to_after_writes_keeps_exactly_the_earlier_rows(server, table) -> None:
    conn = psycopg2.connect(server.dsn)
    conn.autocommit = True
    try:
        cur = conn.cursor()
        for sql in (
            "BEGIN",
            f"INSERT INTO {table} VALUES (1, 'before')",
            "SAVEPOINT a",
            f"INSERT INTO {table} VALUES (2, 'undone')",
            f"UPDATE {table} SET v = 'changed' WHERE id = 1",
            "ROLLBACK TO SAVEPOINT a",
        ):
            cur.execute(sql)
        cur.execute(f"SELECT * FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1, "before")]
        cur.execute(f"INSERT INTO {table} VALUES (3, 'after')")
        cur.execute("COMMIT")
    finally:
        conn.close()
    assert _rows(server.dsn, table) == [(1, "before"), (3, "after")]


def test_error_inside_savepoint_then_rollback_to_makes_the_block_usable(server, table) -> None:
    conn = psycopg2.connect(server.dsn)  # psycopg2 sends BEGIN itself
    try:
        cur = conn.cursor()
        cur.execute(f"INSERT INTO {table} VALUES (1, 'kept')")
        cur.execute("SAVEPOINT a")
        cur.execute(f"INSERT INTO {table} VALUES (2, 'undone')")
        with pytest.raises(psycopg2.errors.UniqueViolation):
            cur.execute(f"INSERT INTO {table} VALUES (1, 'duplicate')")
        with pytest.raises(psycopg2.errors.InFailedSqlTransaction):
            cur.execute("SELECT 1")
        cur.execute("ROLLBACK TO SAVEPOINT a")
        cur.execute(f"SELECT * FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1, "kept")]
        cur.execute(f"INSERT INTO {table} VALUES (4, 'after')")
        conn.commit()
    finally:
        conn.close()
    assert _rows(server.dsn, table) == [(1, "kept"), (4, "after")]


def test_nested_savepoints_rollback_to_the_outer_one_then_release(server, table) -> None:
    conn = psycopg2.connect(server.dsn)
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute("BEGIN")
        cur.execute(f"INSERT INTO {table} VALUES (1, 'a')")
        cur.execute("SAVEPOINT a")
        cur.execute(f"INSERT INTO {table} VALUES (2, 'b')")
        cur.execute("SAVEPOINT b")
        cur.execute(f"INSERT INTO {table} VALUES (3, 'c')")
        cur.execute("ROLLBACK TO SAVEPOINT b")
        cur.execute(f"SELECT id FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1,), (2,)]
        cur.execute("ROLLBACK TO SAVEPOINT a")
        cur.execute(f"SELECT id FROM {table} ORDER BY id")
        assert cur.fetchall() == [(1,)]
        cur.execute("RELEASE SAVEPOINT a")
        cur.execute(f"INSERT INTO {table} VALUES (4, 'd')")
        cur.execute("COMMIT")
        # b went with the ROLLBACK TO a, as in Postgres.
        cur.execute("BEGIN")
        cur.execute("SAVEPOINT a")
        cur.execute("SAVEPOINT b")
        cur.execute(f"INSERT INTO {table} VALUES (5, 'e')")
        cur.execute("ROLLBACK TO SAVEPOINT a")
        with pytest.raises(psycopg2.errors.InvalidSavepointSpecification):
            cur.execute("ROLLBACK TO SAVEPOINT b")
        cur.execute("ROLLBACK")
    finally:
        conn.close()
    assert _rows(server.dsn, table) == [(1, "a"), (4, "d")]


def test_psycopg_nested_transaction_with_unique_violation(server, table_name) -> None:
    """The outer block's rows (bound parameters of many types, replayed) survive."""
    row = (
        "text ✓ 'quoted'",
        Decimal("12345.678"),
        dt.datetime(2024, 2, 29, 12, 30, 1, 123456, tzinfo=dt.UTC),
        b"\x00\xffbytes",
        ["a", "b,c"],
    )
    with psycopg.connect(server.dsn) as conn:
        conn.execute(
            f"CREATE TABLE {table_name} (id int PRIMARY KEY, t text, n numeric(12,3),"
            " at timestamptz, b bytea, tags text[])"
        )
        conn.commit()
        insert = f"INSERT INTO {table_name} VALUES (%s, %s, %s, %s, %s, %s)"
        with conn.transaction():
            conn.execute(insert, (1, *row))
            conn.execute(f"UPDATE {table_name} SET t = t || '!' WHERE id = %s", (1,))
            with pytest.raises(errors.UniqueViolation), conn.transaction():
                conn.execute(insert, (2, *row))
                conn.execute(insert, (1, *row))
            conn.execute(insert, (3, *row))
        got = conn.execute(f"SELECT * FROM {table_name} ORDER BY id").fetchall()
        conn.execute(f"DROP TABLE {table_name}")
        conn.commit()
    first = (row[0] + "!", *row[1:])
    assert got == [(1, *first), (3, *row)]


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "t_savepoint_replay_items"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str]


@pytest.mark.parametrize("driver", ["postgresql+psycopg", "postgresql+psycopg2"])
def test_sqlalchemy_begin_nested_recovers_from_integrity_error(server, driver) -> None:
    engine = sa.create_engine(server.url(driver))
    try:
        Base.metadata.drop_all(engine)
        Base.metadata.create_all(engine)
        with Session(engine) as session:
            session.add(Item(id=1, name="outer"))
            session.flush()
            try:
                with session.begin_nested():
                    session.add(Item(id=2, name="inner"))
                    session.flush()
                    session.add(Item(id=1, name="duplicate"))
                    session.flush()
            except IntegrityError:
                pass
            session.add(Item(id=3, name="after"))
            session.commit()
        with Session(engine) as session:
            got = [(i.id, i.name) for i in session.scalars(sa.select(Item).order_by(Item.id))]
        assert got == [(1, "outer"), (3, "after")]
        Base.metadata.drop_all(engine)
    finally:
        engine.dispose()


def test_a_write_committed_by_another_connection_refuses_the_replay(
    server, table, table_name
) -> None:
    other_table = table_name + "_other"
    with psycopg.connect(server.dsn, autocommit=True) as other:
        other.execute(f"CREATE TABLE {other_table} (id int)")
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("BEGIN")
            conn.execute(f"INSERT INTO {table} VALUES (1, 'a')")
            conn.execute("SAVEPOINT a")
            conn.execute(f"INSERT INTO {table} VALUES (2, 'b')")
            # Reads (and read-only transactions) elsewhere do not matter ...
            other.execute(f"SELECT count(*) FROM {table}")
            with other.transaction():
                other.execute("SELECT 1")
            conn.execute("ROLLBACK TO SAVEPOINT a")
            conn.execute(f"INSERT INTO {table} VALUES (3, 'c')")
            conn.execute("SAVEPOINT b")
            conn.execute(f"INSERT INTO {table} VALUES (4, 'd')")
            # ... a committed write does: the replay would run on a newer snapshot.
            other.execute(f"INSERT INTO {other_table} VALUES (100)")
            with pytest.raises(errors.FeatureNotSupported) as exc:
                conn.execute("ROLLBACK TO SAVEPOINT b")
            assert REFUSED in str(exc.value)
            assert "another transaction committed a write" in str(exc.value)
            assert exc.value.diag.message_hint == "Roll back the whole transaction."
            with pytest.raises(errors.InFailedSqlTransaction):
                conn.execute("SELECT 1")
            conn.execute("ROLLBACK")
        assert _rows(server.dsn, table) == []
        assert _rows(server.dsn, other_table) == [(100,)]
        other.execute(f"DROP TABLE {other_table}")


@pytest.mark.parametrize(
    ("value", "named"),
    [("random()::text", "random()"), ("now()::text", "current_timestamp()")],
)
def test_a_volatile_function_before_the_savepoint_refuses_the_replay(
    server, table, value, named
) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {table} VALUES (1, {value})")
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {table} VALUES (2, 'b')")
        with pytest.raises(errors.FeatureNotSupported) as exc:
            conn.execute("ROLLBACK TO SAVEPOINT a")
        assert REFUSED in str(exc.value) and named in str(exc.value)
        conn.execute("ROLLBACK")
    assert _rows(server.dsn, table) == []


def test_serial_ids_drawn_before_the_savepoint_are_kept_by_the_replay(server, table_name) -> None:
    """Sequences are not transactional, so a replayed INSERT would draw new ids: the
    server writes the ids the rows got into the recorded INSERTs at SAVEPOINT."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id serial PRIMARY KEY, v text)")
        conn.execute("BEGIN")
        first = conn.execute(
            f"INSERT INTO {table_name} (v) VALUES ('a'), ('b') RETURNING id"
        ).fetchall()
        third = conn.execute(
            f"INSERT INTO {table_name} (v) VALUES (%s) RETURNING id", ["c"]
        ).fetchone()
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {table_name} (v) VALUES ('d')")
        with pytest.raises(errors.UniqueViolation):
            conn.execute(f"INSERT INTO {table_name} VALUES (%s, 'x')", [third[0]])
        conn.execute("ROLLBACK TO SAVEPOINT a")
        last = conn.execute(f"INSERT INTO {table_name} (v) VALUES ('e') RETURNING id").fetchone()
        conn.execute("COMMIT")
        ids = [r[0] for r in first] + [third[0], last[0]]
        got = conn.execute(f"SELECT id, v FROM {table_name} ORDER BY id").fetchall()
        assert got == list(zip(ids, "abce", strict=True))
        conn.execute(f"DROP TABLE {table_name}")


def test_a_sequence_default_in_insert_select_refuses_the_replay(server, table_name) -> None:
    """Only INSERT ... VALUES gets its ids pinned: an INSERT ... SELECT still refuses."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SEQUENCE {table_name}_seq")
        conn.execute(
            f"CREATE TABLE {table_name} (id int DEFAULT nextval('{table_name}_seq'), v text)"
        )
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {table_name} (v) SELECT 'a'")
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {table_name} (v) VALUES ('b')")
        with pytest.raises(errors.FeatureNotSupported) as exc:
            conn.execute("ROLLBACK TO SAVEPOINT a")
        assert "nextval" in str(exc.value)
        conn.execute("ROLLBACK")
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)
        conn.execute(f"DROP TABLE {table_name}")
        conn.execute(f"DROP SEQUENCE {table_name}_seq")


def test_writes_beyond_the_replay_log_limit_refuse_the_replay(server, table) -> None:
    big = "x" * (5 * 1024 * 1024)
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"INSERT INTO {table} VALUES (1, %s)", (big,))
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {table} VALUES (2, 'b')")
        with pytest.raises(errors.FeatureNotSupported) as exc:
            conn.execute("ROLLBACK TO SAVEPOINT a")
        assert "exceed the 4 MB kept for replay" in str(exc.value)
        conn.rollback()
    assert _rows(server.dsn, table) == []


def _frame(tag: bytes, body: bytes) -> bytes:
    return tag + struct.pack("!i", len(body) + 4) + body


def test_a_client_gone_mid_pipeline_does_not_block_later_replays(server, table) -> None:
    """An INSERT executed without Sync holds an implicit transaction (a write not yet
    committed); the client vanishes. Its rollback must end that write's count, or no
    ROLLBACK TO could replay again until the server restarts."""
    sock = socket.create_connection((server.host, server.port), timeout=10)
    body = struct.pack("!i", 196608) + b"user\0tester\0database\0hatidata\0\0"
    sock.sendall(struct.pack("!i", len(body) + 4) + body)
    data = b""
    while b"Z\0\0\0\x05" not in data:  # ReadyForQuery after login
        chunk = sock.recv(65536)
        assert chunk
        data += chunk
    insert = f"INSERT INTO {table} VALUES (99, 'gone')".encode()
    sock.sendall(
        _frame(b"P", b"\0" + insert + b"\0" + struct.pack("!h", 0))
        + _frame(b"B", b"\0\0" + struct.pack("!hhh", 0, 0, 0))
        + _frame(b"E", b"\0" + struct.pack("!i", 0))
        + _frame(b"H", b"")  # Flush, no Sync: the implicit transaction stays open
    )
    data = b""
    while b"INSERT 0 1" not in data:  # CommandComplete: the INSERT ran
        chunk = sock.recv(65536)
        assert chunk
        data += chunk
    sock.close()
    deadline = time.monotonic() + 10
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        while True:  # the server notices the hang-up a moment later
            conn.execute("BEGIN")
            conn.execute(f"INSERT INTO {table} VALUES (1, 'a')")
            conn.execute("SAVEPOINT a")
            conn.execute(f"INSERT INTO {table} VALUES (2, 'b')")
            try:
                conn.execute("ROLLBACK TO SAVEPOINT a")
                break
            except errors.FeatureNotSupported as exc:
                conn.execute("ROLLBACK")
                assert "another transaction" in str(exc) and time.monotonic() < deadline
                time.sleep(0.1)
        conn.execute("COMMIT")
    assert _rows(server.dsn, table) == [(1, "a")]


@pytest.fixture(scope="module")
def quiet_server(tmp_path_factory):
    """No access-count flush during a test: that is a write, and would refuse replays."""
    srv = start_server(
        tmp_path_factory.mktemp("replay_agent"), "--database", ":memory:",
        "--embedding-provider", "hash", "--access-tracker-flush-interval-secs", "3600",
    )  # fmt: skip
    yield srv
    srv.stop()


def _embedded(agent: psycopg.Connection, memory_id: str) -> None:
    """Wait for the background embedding write (a write of its own) to land."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        sql = "SELECT embedding_status FROM get_memory(%s)"
        if agent.execute(sql, (memory_id,)).fetchone() == ("embedded",):
            return
        time.sleep(0.05)
    raise AssertionError("the memory was not embedded")


def test_agent_work_does_not_refuse_the_replay(
    quiet_server,
) -> None:
    """Agent-layer work cannot change what the replay sees: its reads (memory search and
    listing from SQL, a /metrics scrape) change nothing, and its writes (a memory stored
    meanwhile) go to the agent database, not the users' one the replay reads."""
    server, table = quiet_server, "replay_vs_agent"

    def scrape() -> None:
        url = f"http://127.0.0.1:{server.rest_port}/metrics"
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert resp.status == 200

    with (
        psycopg.connect(server.dsn, autocommit=True) as agent,
        psycopg.connect(server.dsn, autocommit=True) as conn,
    ):
        conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v text)")
        stored = "SELECT memory_id FROM store_memory(%s)"
        _embedded(agent, agent.execute(stored, ("replay probe memory",)).fetchone()[0])
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {table} VALUES (1, 'a')")
        conn.execute("SAVEPOINT a")
        conn.execute(f"INSERT INTO {table} VALUES (2, 'b')")
        found = agent.execute("SELECT content FROM search_memory('replay probe', top_k := 3)")
        assert ("replay probe memory",) in found.fetchall()
        assert agent.execute("SELECT count(*) FROM list_memories()").fetchone()[0] == 1
        scrape()
        conn.execute("ROLLBACK TO SAVEPOINT a")
        conn.execute(f"INSERT INTO {table} VALUES (3, 'c')")
        conn.execute("SAVEPOINT b")
        conn.execute(f"INSERT INTO {table} VALUES (4, 'd')")
        written = agent.execute(stored, ("a write during the block",)).fetchone()[0]
        _embedded(agent, written)
        conn.execute("ROLLBACK TO SAVEPOINT b")
        conn.execute("COMMIT")
    assert _rows(server.dsn, table) == [(1, "a"), (3, "c")]
