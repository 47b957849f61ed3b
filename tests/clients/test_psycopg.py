"""psycopg 3: tags, errors, transactions, executemany, COPY, pipeline, cancel, timeouts."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg import errors, sql

# A DuckDB query that runs for many seconds unless interrupted.
LONG_QUERY = "SELECT count(*) FROM range(10000000000) t(a) WHERE a % 7 = 3"


def test_command_tags_and_rowcounts(conn, table_name) -> None:
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, v text)")
    assert cur.statusmessage == "CREATE TABLE"
    cur.execute(f"INSERT INTO {table_name} SELECT i, 'v' || i FROM range(5) t(i)")
    assert (cur.statusmessage, cur.rowcount) == ("INSERT 0 5", 5)
    cur.execute(f"UPDATE {table_name} SET v = 'x' WHERE id < 3")
    assert (cur.statusmessage, cur.rowcount) == ("UPDATE 3", 3)
    cur.execute(f"DELETE FROM {table_name} WHERE id = 4")
    assert (cur.statusmessage, cur.rowcount) == ("DELETE 1", 1)
    cur.execute(f"SELECT * FROM {table_name} ORDER BY id")
    assert (cur.statusmessage, cur.rowcount) == ("SELECT 4", 4)
    cur.execute(f"INSERT INTO {table_name} VALUES (%s, %s) RETURNING id, v", (9, "nine"))
    assert cur.fetchall() == [(9, "nine")]
    assert cur.statusmessage == "INSERT 0 1"
    cur.execute(f"DROP TABLE {table_name}")
    assert cur.statusmessage == "DROP TABLE"


def test_multiple_statements_in_one_simple_query(conn) -> None:
    cur = conn.cursor()
    cur.execute("SELECT 1; SELECT 'two', 3")
    assert cur.fetchall() == [(1,)]
    assert cur.nextset()
    assert cur.fetchall() == [("two", 3)]


@pytest.mark.parametrize(
    "query,sqlstate",
    [
        ("SELEC 1", "42601"),
        ("SELECT * FROM no_such_table_xyz", "42P01"),
        ("SELECT no_such_column FROM (SELECT 1 AS a) t", "42703"),
        ("SELECT no_such_function_xyz(1)", "42883"),
        ("SELECT 'abc'::integer", "22P02"),
    ],
)
def test_errors_carry_sqlstate(conn, query, sqlstate) -> None:
    for prepare in (False, True):
        with pytest.raises(psycopg.Error) as info:
            conn.execute(query, prepare=prepare)
        assert info.value.sqlstate == sqlstate, info.value
        assert info.value.diag.message_primary
    assert conn.execute("SELECT 1").fetchone() == (1,)  # the connection survives


def test_unique_violation(conn, table_name) -> None:
    conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
    conn.execute(f"INSERT INTO {table_name} VALUES (1)")
    with pytest.raises(errors.UniqueViolation):
        conn.execute(f"INSERT INTO {table_name} VALUES (%s)", (1,))
    conn.execute(f"DROP TABLE {table_name}")


def test_transaction_commit_rollback_and_failed_state(server, table_name) -> None:
    with psycopg.connect(server.dsn) as conn:  # not autocommit: psycopg issues BEGIN
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.commit()
        conn.execute(f"INSERT INTO {table_name} VALUES (1)")
        conn.rollback()
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (0,)
        conn.execute(f"INSERT INTO {table_name} VALUES (2)")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        with pytest.raises(errors.UniqueViolation):
            conn.execute(f"INSERT INTO {table_name} VALUES (2)")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        with conn.transaction():
            conn.execute(f"INSERT INTO {table_name} VALUES (3)")
        assert conn.execute(f"SELECT id FROM {table_name}").fetchall() == [(3,)]
        conn.execute(f"DROP TABLE {table_name}")
        conn.commit()


def test_executemany(conn, table_name) -> None:
    conn.execute(f"CREATE TABLE {table_name} (id int, name text, score double)")
    rows = [(i, f"n{i}", i / 4) for i in range(50)]
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {table_name} VALUES (%s, %s, %s)", rows)
        assert cur.rowcount == 50
        cur.executemany(
            f"INSERT INTO {table_name} VALUES (%s, %s, %s) RETURNING id * 2",
            [(100, "a", 0.0), (101, "b", 1.0)],
            returning=True,
        )
        got = [cur.fetchone()]
        while cur.nextset():
            got.append(cur.fetchone())
        assert got == [(200,), (202,)]
    assert conn.execute(f"SELECT * FROM {table_name} ORDER BY id LIMIT 50").fetchall() == rows
    conn.execute(f"DROP TABLE {table_name}")


def test_copy_in_and_out_text_rows(conn, table_name) -> None:
    conn.execute(f"CREATE TABLE {table_name} (id int, name text, note text)")
    rows = [(1, "a\tb", None), (2, 'quote " and , comma \\', "x"), (3, "newline\nhere", "")]
    with conn.cursor() as cur:
        with cur.copy(f"COPY {table_name} (id, name, note) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        assert cur.rowcount == 3
        assert cur.statusmessage == "COPY 3"
        assert conn.execute(f"SELECT * FROM {table_name} ORDER BY id").fetchall() == rows
        with cur.copy(f"COPY (SELECT * FROM {table_name} ORDER BY id) TO STDOUT") as copy:
            copy.set_types(["int4", "text", "text"])
            assert list(copy.rows()) == rows
    conn.execute(f"DROP TABLE {table_name}")


def test_copy_in_and_out_csv(conn, table_name) -> None:
    conn.execute(f"CREATE TABLE {table_name} (id int, name text, note text)")
    data = 'id,name,note\n1,"a,b",\n2,"say ""hi""","multi\nline"\n3,plain,""\n'
    with conn.cursor() as cur:
        with cur.copy(f"COPY {table_name} FROM STDIN (FORMAT csv, HEADER true)") as copy:
            copy.write(data[:20])  # split mid-row: the server must reassemble
            copy.write(data[20:])
        assert cur.rowcount == 3
    got = conn.execute(f"SELECT * FROM {table_name} ORDER BY id").fetchall()
    assert got == [(1, "a,b", None), (2, 'say "hi"', "multi\nline"), (3, "plain", "")]
    with (
        conn.cursor() as cur,
        cur.copy(f"COPY {table_name} TO STDOUT (FORMAT csv, HEADER)") as copy,
    ):
        out = b"".join(bytes(b) for b in copy).decode()
    assert out.splitlines()[0] == "id,name,note"
    assert out.replace("\r\n", "\n") == (
        'id,name,note\n1,"a,b",\n2,"say ""hi""","multi\nline"\n3,plain,""\n'
    )
    conn.execute(f"DROP TABLE {table_name}")


def test_copy_in_of_no_rows(conn, table_name) -> None:
    """An empty COPY (a query that matched nothing upstream, a header-only CSV) loads
    nothing and says COPY 0, in every format, inside a transaction too."""
    conn.execute(f"CREATE TABLE {table_name} (id int, name text)")
    conn.execute(f"INSERT INTO {table_name} VALUES (1, 'kept')")
    with conn.transaction(), conn.cursor() as cur:
        for options, data in (
            ("", b""),
            ("(FORMAT csv, HEADER true)", b"id,name\n"),
            ("(FORMAT binary)", None),
        ):
            with cur.copy(f"COPY {table_name} FROM STDIN {options}") as copy:
                if data:
                    copy.write(data)
            assert cur.statusmessage == "COPY 0", options
        assert conn.execute(f"SELECT * FROM {table_name}").fetchall() == [(1, "kept")]
    conn.execute(f"DROP TABLE {table_name}")


def test_copy_out_raw_text(conn) -> None:
    with conn.cursor() as cur:
        with cur.copy("COPY (SELECT i, 'r' || i FROM range(3) t(i)) TO STDOUT") as copy:
            data = b"".join(bytes(b) for b in copy)
        assert data == b"0\tr0\n1\tr1\n2\tr2\n"


def test_pipeline_mode(conn, table_name) -> None:
    conn.execute(f"CREATE TABLE {table_name} (id int, v text)")
    with conn.pipeline():
        cur = conn.cursor()
        for i in range(20):
            cur.execute(f"INSERT INTO {table_name} VALUES (%s, %s)", (i, str(i)))
        c2 = conn.execute(f"SELECT count(*), max(id) FROM {table_name}")
        c3 = conn.execute("SELECT %s::int + 1", (41,))
    assert c2.fetchone() == (20, 19)
    assert c3.fetchone() == (42,)
    # An error in a pipeline fails the rest of it; the connection stays usable.
    with pytest.raises(errors.UndefinedTable), conn.pipeline():
        conn.execute("SELECT * FROM no_such_table_pipeline")
        conn.execute("SELECT 1")
    assert conn.execute("SELECT 2").fetchone() == (2,)
    conn.execute(f"DROP TABLE {table_name}")


def test_cancel_interrupts_long_query(conn) -> None:
    timer = threading.Timer(0.5, conn.cancel)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(errors.QueryCanceled) as info:
            conn.execute(LONG_QUERY)
    finally:
        timer.cancel()
    assert info.value.sqlstate == "57014"
    assert time.monotonic() - started < 10
    assert conn.execute("SELECT 'still usable'").fetchone() == ("still usable",)


def test_statement_timeout(conn) -> None:
    conn.execute("SET statement_timeout = '200ms'")
    assert conn.execute("SHOW statement_timeout").fetchone()[0] == "200ms"
    started = time.monotonic()
    with pytest.raises(errors.QueryCanceled) as info:
        conn.execute(LONG_QUERY)
    assert info.value.sqlstate == "57014"
    assert "timeout" in str(info.value)
    assert time.monotonic() - started < 5
    assert conn.execute("SELECT 1").fetchone() == (1,)  # short queries still run
    conn.execute("RESET statement_timeout")
    assert conn.execute("SHOW statement_timeout").fetchone()[0] == "0"


def test_parameter_status_on_set(conn) -> None:
    conn.execute("SET application_name = 'my-app'")
    assert conn.info.parameter_status("application_name") == "my-app"
    assert conn.execute("SHOW application_name").fetchone() == ("my-app",)
    assert conn.info.parameter_status("server_version").startswith("15")
    assert conn.info.parameter_status("DateStyle").startswith("ISO")
    assert conn.info.parameter_status("client_encoding") == "UTF8"


def test_identifiers_and_composed_sql(conn, table_name) -> None:
    name = sql.Identifier(table_name + "_Mixed")
    conn.execute(sql.SQL("CREATE TABLE {} ({} int)").format(name, sql.Identifier("Col")))
    conn.execute(sql.SQL("INSERT INTO {} VALUES (%s)").format(name), (5,))
    cur = conn.execute(sql.SQL("SELECT {} FROM {}").format(sql.Identifier("Col"), name))
    assert cur.description[0].name == "Col"
    assert cur.fetchall() == [(5,)]
    conn.execute(sql.SQL("DROP TABLE {}").format(name))


def test_savepoints_around_reads_and_release(server, table_name) -> None:
    """psycopg nests conn.transaction() with SAVEPOINT/RELEASE (SQLAlchemy does at connect)."""
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY)")
        conn.commit()
        with conn.transaction():
            conn.execute(f"INSERT INTO {table_name} VALUES (1)")
            with conn.transaction():  # SAVEPOINT ... RELEASE
                conn.execute(f"INSERT INTO {table_name} VALUES (2)")
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (2,)
        conn.commit()
        # A read-only transaction can roll back to a savepoint even after an error.
        with conn.transaction():
            conn.execute("SELECT 1")
            with pytest.raises(errors.UndefinedTable), conn.transaction():
                conn.execute("SELECT * FROM no_such_table_savepoint")
            assert conn.execute("SELECT 2").fetchone() == (2,)
        # A write after the savepoint is undone (test_savepoint_replay.py has the rest).
        cur = conn.cursor()
        cur.execute("SAVEPOINT a")
        cur.execute(f"INSERT INTO {table_name} VALUES (3)")
        cur.execute("ROLLBACK TO SAVEPOINT a")
        assert conn.execute(f"SELECT count(*) FROM {table_name}").fetchone() == (2,)
        conn.rollback()
        with pytest.raises(errors.InvalidSavepointSpecification):
            cur.execute("RELEASE SAVEPOINT nope")
        conn.rollback()
        conn.execute(f"DROP TABLE {table_name}")
        conn.commit()


def test_login_user_functions_name_the_connected_user(server) -> None:
    """current_user & co. return the login name (DuckDB's own say 'duckdb'), under the
    column names Postgres gives them, in simple and extended protocol alike."""
    dsn = server.dsn.replace("user=tester", "user=alice")
    with psycopg.connect(dsn, autocommit=True) as conn:
        sql = "SELECT current_user, session_user, current_role, user"
        for prepare in (False, True):
            cur = conn.execute(sql, prepare=prepare)
            assert [d.name for d in cur.description] == [
                "current_user", "session_user", "current_role", "user"
            ]  # fmt: skip
            assert cur.fetchall() == [("alice",) * 4]
        assert conn.execute("SELECT 1 WHERE current_user = %s", ["alice"]).fetchone() == (1,)
