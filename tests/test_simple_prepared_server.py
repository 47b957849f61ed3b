"""SQL PREPARE / EXECUTE / DEALLOCATE among several statements of one simple Query (psql -c,
psycopg2, pgbench scripts send them so): each statement's result in order, as PostgreSQL
15 gives them (EXECUTE completes with its statement's tag), and an error ends the message,
rolling back its implicit transaction (a PREPARE is kept: it is not transactional)."""

from __future__ import annotations

import psycopg
import pytest

from transpiler.sql_prepare import message_pieces


def _results(conn: psycopg.Connection, sql: str) -> list[tuple[str, list[tuple] | None]]:
    cur = conn.cursor()
    cur.execute(sql, prepare=False)  # no parameters: one simple Query message
    out = []
    while True:
        out.append((cur.statusmessage, cur.fetchall() if cur.description else None))
        if not cur.nextset():
            return out


def test_each_statement_answers_in_order(server) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        got = _results(conn, "PREPARE sp_a AS SELECT $1::int * 2; EXECUTE sp_a(1); EXECUTE sp_a(4)")
        assert got == [("PREPARE", None), ("SELECT 1", [(2,)]), ("SELECT 1", [(8,)])]
        # kept for the session's later messages, and DEALLOCATE in a message drops it
        assert conn.execute("EXECUTE sp_a(5)").fetchall() == [(10,)]
        got = _results(conn, "EXECUTE sp_a(6); DEALLOCATE sp_a; SELECT 'after'")
        assert got == [("SELECT 1", [(12,)]), ("DEALLOCATE", None), ("SELECT 1", [("after",)])]
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            conn.execute("EXECUTE sp_a(1)")


def test_dml_tags_and_an_error_rolls_the_message_back(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {t} (x int)")
        got = _results(
            conn,
            f"PREPARE {t}_i AS INSERT INTO {t} VALUES ($1::int), ($1::int + 1); EXECUTE {t}_i(1)",
        )
        assert got == [("PREPARE", None), ("INSERT 0 2", None)]
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            _results(conn, f"EXECUTE {t}_i(10); EXECUTE {t}_i('x'); EXECUTE {t}_i(20)")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        rows = conn.execute(f"SELECT x FROM {t} ORDER BY x").fetchall()
        assert rows == [(1,), (2,)]  # the first EXECUTE rolled back, the third never ran
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            _results(conn, f"EXECUTE {t}_i(30); PREPARE {t}_i AS SELECT 1")
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (2,)


def test_inside_an_explicit_transaction(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"CREATE TABLE {t} (x int)")
        conn.commit()
        _results(conn, f"PREPARE {t}_i AS INSERT INTO {t} VALUES ($1); EXECUTE {t}_i(1)")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            _results(conn, f"EXECUTE {t}_i(2); EXECUTE {t}_i('y')")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        conn.rollback()
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
        # a message holding its own BEGIN / COMMIT runs it as written
        got = _results(conn, f"BEGIN; EXECUTE {t}_i(7); COMMIT")
        assert [tag for tag, _ in got] == ["BEGIN", "INSERT 0 1", "COMMIT"]
        assert conn.execute(f"SELECT x FROM {t}").fetchall() == [(7,)]


def test_an_error_position_counts_from_the_message_start(server) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedColumn) as info:
            conn.execute("PREPARE sp_pos AS SELECT 1; SELECT nosuchcol")
        assert info.value.diag.statement_position == "36"  # as PostgreSQL 15
        got = _results(conn, "PREPARE sp_all AS SELECT 1; DEALLOCATE ALL; SELECT 2")
        assert got == [("PREPARE", None), ("DEALLOCATE ALL", None), ("SELECT 1", [(2,)])]
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            conn.execute("EXECUTE sp_pos")


def test_which_messages_are_split() -> None:
    assert message_pieces("PREPARE a AS SELECT 1; EXECUTE a") == (
        [(0, "PREPARE a AS SELECT 1"), (23, "EXECUTE a")],
        True,
    )
    assert message_pieces("BEGIN; EXECUTE a; COMMIT") == (
        [(0, "BEGIN"), (7, "EXECUTE a"), (18, "COMMIT")],
        False,
    )
    assert message_pieces("EXECUTE a") is None  # one statement: the usual path
    assert message_pieces("SELECT 'PREPARE'; SELECT 2") is None
    assert message_pieces("SELECT 1; EXECUTE a('x)") is None  # does not tokenize
