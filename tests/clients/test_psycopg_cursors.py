"""Server-side cursors: psycopg named cursors and plain DECLARE / FETCH / MOVE / CLOSE."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors


@pytest.fixture
def conn(server, table_name) -> Iterator[psycopg.Connection]:
    with psycopg.connect(server.dsn) as c:
        c.execute(f"CREATE TABLE {table_name} (id int, label text, x double)")
        c.execute(
            f"INSERT INTO {table_name} SELECT i, 'row ' || i, i / 2.0 FROM range(1, 101) t(i)"
        )
        c.commit()
        yield c
        c.rollback()
        c.execute(f"DROP TABLE {table_name}")
        c.commit()


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_named_cursor_fetches_in_batches(conn, table_name, binary) -> None:
    with conn.cursor(name="big", binary=binary) as cur:
        cur.itersize = 7
        cur.execute(f"SELECT id, label, x FROM {table_name} WHERE id > %s ORDER BY id", (10,))
        assert [d.name for d in cur.description] == ["id", "label", "x"]
        assert cur.fetchone() == (11, "row 11", 5.5)
        assert cur.fetchmany(3) == [(12, "row 12", 6.0), (13, "row 13", 6.5), (14, "row 14", 7.0)]
        rest = list(cur)  # iterates with FETCH FORWARD itersize
        assert [r[0] for r in rest] == list(range(15, 101))
    conn.commit()


def test_named_cursor_scroll_and_fetchall(conn, table_name) -> None:
    with conn.cursor(name="scrolly", scrollable=True) as cur:
        cur.execute(f"SELECT id FROM {table_name} ORDER BY id DESC")
        assert cur.fetchone() == (100,)
        cur.scroll(10)  # MOVE 10
        assert cur.fetchone() == (89,)
        cur.scroll(0, mode="absolute")  # MOVE ABSOLUTE 0
        assert cur.fetchmany(2) == [(100,), (99,)]
        cur.scroll(-2)
        assert cur.fetchone() == (100,)
        assert len(cur.fetchall()) == 99
        assert cur.fetchall() == []
    conn.commit()


def test_withhold_cursor_survives_commit(server, table_name, conn) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as ac:
        with ac.cursor(name="held", withhold=True) as cur:
            cur.execute(f"SELECT id FROM {table_name} ORDER BY id LIMIT 5")
            assert cur.fetchmany(2) == [(1,), (2,)]
            assert cur.fetchall() == [(3,), (4,), (5,)]
        # Closed by the context manager: the name is free again.
        ac.execute(f"DECLARE held CURSOR WITH HOLD FOR SELECT id FROM {table_name}")
        ac.execute("CLOSE held")


def test_declare_fetch_move_close_tags(conn, table_name) -> None:
    cur = conn.cursor()
    cur.execute(f"DECLARE c SCROLL CURSOR FOR SELECT id FROM {table_name} ORDER BY id")
    assert cur.statusmessage == "DECLARE CURSOR"
    cur.execute("FETCH FORWARD 3 FROM c")
    assert cur.fetchall() == [(1,), (2,), (3,)]
    assert cur.statusmessage == "FETCH 3"
    cur.execute("MOVE 5 IN c")
    assert cur.statusmessage == "MOVE 5"
    cur.execute("FETCH NEXT FROM c")
    assert cur.fetchall() == [(9,)]
    cur.execute("FETCH PRIOR FROM c")
    assert cur.fetchall() == [(8,)]
    cur.execute("FETCH BACKWARD 2 FROM c")
    assert cur.fetchall() == [(7,), (6,)]
    cur.execute("FETCH LAST FROM c")
    assert cur.fetchall() == [(100,)]
    cur.execute("FETCH 5 FROM c")
    assert cur.fetchall() == [] and cur.statusmessage == "FETCH 0"
    cur.execute("FETCH ABSOLUTE 42 FROM c")
    assert cur.fetchall() == [(42,)]
    cur.execute("FETCH RELATIVE -2 FROM c")
    assert cur.fetchall() == [(40,)]
    cur.execute("MOVE ABSOLUTE 98 IN c")
    cur.execute("FETCH ALL FROM c")
    assert cur.fetchall() == [(99,), (100,)] and cur.statusmessage == "FETCH 2"
    cur.execute("CLOSE c")
    assert cur.statusmessage == "CLOSE CURSOR"
    with pytest.raises(errors.InvalidCursorName):
        cur.execute("FETCH 1 FROM c")
    conn.rollback()


def test_cursor_errors(conn, table_name) -> None:
    cur = conn.cursor()
    cur.execute(f"DECLARE fwd NO SCROLL CURSOR FOR SELECT id FROM {table_name}")
    with pytest.raises(errors.ObjectNotInPrerequisiteState):
        cur.execute("FETCH BACKWARD 1 FROM fwd")
    conn.rollback()
    cur.execute(f"DECLARE dup CURSOR FOR SELECT id FROM {table_name}")
    with pytest.raises(errors.DuplicateCursor):
        cur.execute(f"DECLARE dup CURSOR FOR SELECT id FROM {table_name}")
    conn.rollback()
    with pytest.raises(errors.InvalidCursorName):
        cur.execute("CLOSE no_such_cursor")
    conn.rollback()


def test_cursor_without_hold_ends_with_transaction(server, table_name, conn) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as ac:
        with pytest.raises(errors.NoActiveSqlTransaction):
            ac.execute(f"DECLARE c CURSOR FOR SELECT id FROM {table_name}")
        ac.execute("BEGIN")
        ac.execute(f"DECLARE c CURSOR FOR SELECT id FROM {table_name} ORDER BY id")
        ac.execute(f"DECLARE h CURSOR WITH HOLD FOR SELECT id FROM {table_name} ORDER BY id")
        ac.execute("COMMIT")
        with pytest.raises(errors.InvalidCursorName):
            ac.execute("FETCH 1 FROM c")
        assert ac.execute("FETCH 2 FROM h").fetchall() == [(1,), (2,)]
        ac.execute("BEGIN")
        ac.execute(f"DECLARE r CURSOR WITH HOLD FOR SELECT id FROM {table_name}")
        ac.execute("ROLLBACK")  # a rollback takes the held cursors declared in it
        with pytest.raises(errors.InvalidCursorName):
            ac.execute("FETCH 1 FROM r")
        assert ac.execute("FETCH 1 FROM h").fetchall() == [(3,)]  # older held cursor stays
        ac.execute("CLOSE ALL")
        with pytest.raises(errors.InvalidCursorName):
            ac.execute("FETCH 1 FROM h")
