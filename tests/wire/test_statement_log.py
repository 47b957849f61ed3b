"""The server's statement log, read from a real server's log: failed statements (ERROR,
SQLSTATE, message, STATEMENT) with the session, never a bound parameter or a password;
`log_statement` and `log_min_duration_statement` as in PostgreSQL (server flag, SHOW,
pg_settings, superuser-only SET)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import psycopg
import pytest

from proxy.core import config
from tests.conftest import start_server
from tests.rest.rest_support import KeyedServer, KeySpec, create_keys


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    tmp = tmp_path_factory.mktemp("statement_log")
    secrets = create_keys(tmp / "data", {"alice": KeySpec("agent", agent_id="alice")})
    args = ("--users", "root:rootpw", "--embedding-provider", "hash", "--log-statement", "mod")
    server = KeyedServer(start_server(tmp, *args), secrets)
    yield server
    server.server.stop()


def connect(ks: KeyedServer, who: str = "root", **kw: str) -> psycopg.Connection:
    password = "rootpw" if who == "root" else ks.secrets[who]
    user = "root" if who == "root" else "postgres"  # a key logs in under any other name
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user=user, password=password,
        dbname="hatidata", autocommit=True, **kw,
    )  # fmt: skip


def log_lines(ks: KeyedServer, needle: str, timeout: float = 5.0) -> list[str]:
    """Lines of the server log containing `needle` (waiting a little for them)."""
    deadline = time.monotonic() + timeout
    while True:
        lines = [line for line in ks.server.log().splitlines() if needle in line]
        if lines or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def simple(con: psycopg.Connection, sql: str) -> None:
    """Run `sql` with the simple query protocol (libpq's PQexec)."""
    con.pgconn.exec_(sql.encode())


def test_failed_statement_logged_with_sqlstate_statement_and_session(ks: KeyedServer) -> None:
    with connect(ks, application_name="logcheck") as con:
        pid = con.execute("SELECT pg_backend_pid()").fetchone()[0]
        port = con.execute(
            "SELECT client_port FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        ).fetchone()[0]
        with pytest.raises(psycopg.errors.UndefinedTable):
            con.execute("SELECT * FROM no_such_table_x1")
    errors = log_lines(ks, "no_such_table_x1")
    error = next(line for line in errors if "ERROR:" in line)
    assert " ERROR " in error  # logged at ERROR level
    assert f"[conn={pid} user=root agent=root app=logcheck remote=127.0.0.1:{port}]" in error
    assert "ERROR:  42P01: " in error
    assert any(line.strip() == "STATEMENT:  SELECT * FROM no_such_table_x1" for line in errors)


def test_agent_named_and_bound_parameters_never_logged(ks: KeyedServer) -> None:
    with connect(ks, "alice") as con, pytest.raises(psycopg.errors.UndefinedTable):
        con.execute("SELECT %s AS x6 FROM no_such_table_x6", ("topsecret-param-v1",))
    log = ks.server.log()
    assert "topsecret-param-v1" not in log
    assert log_lines(ks, "STATEMENT:  SELECT $1 AS x6 FROM no_such_table_x6"), log[-3000:]
    error = next(line for line in log.splitlines() if "no_such_table_x6" in line)
    assert "user=postgres agent=alice " in error


def test_passwords_masked_and_long_statements_cut(ks: KeyedServer) -> None:
    with connect(ks) as con:
        with pytest.raises(psycopg.Error):
            con.execute("ALTER ROLE nobody_x2 WITH PASSWORD 'hunter2-pw'")
        with pytest.raises(psycopg.errors.UndefinedColumn):
            con.execute("SELECT nope_x3 /* " + "y" * 10_000 + " */")
    log = ks.server.log()
    assert "hunter2-pw" not in log
    assert log_lines(ks, "PASSWORD '***'")
    [cut] = log_lines(ks, "SELECT nope_x3")
    assert len(cut) < 2200
    assert re.search(r"\.\.\. \(\d+ more characters\)$", cut)


def test_log_statement_mod_from_the_server_flag(ks: KeyedServer) -> None:
    with connect(ks) as con:
        assert con.execute("SHOW log_statement").fetchone() == ("mod",)
        setting = "SELECT setting FROM pg_settings WHERE name = 'log_statement'"
        assert con.execute(setting).fetchone() == ("mod",)
        simple(con, "CREATE TABLE logged_mod_x4 (a INT)")
        simple(con, "INSERT INTO logged_mod_x4 VALUES (1)")
        simple(con, "SELECT a AS unlogged_x4 FROM logged_mod_x4")
        con.execute("UPDATE logged_mod_x4 SET a = %s", (2,))
    assert log_lines(ks, "LOG:  statement: CREATE TABLE logged_mod_x4 (a INT)")
    assert log_lines(ks, "LOG:  statement: INSERT INTO logged_mod_x4 VALUES (1)")
    assert log_lines(ks, "LOG:  execute <unnamed>: UPDATE logged_mod_x4 SET a = $1")
    assert not log_lines(ks, "unlogged_x4", timeout=0.5)


def test_superuser_set_and_duration_log(ks: KeyedServer) -> None:
    with connect(ks) as con:
        con.execute("SET log_statement = 'all'")
        con.execute("SET log_min_duration_statement = 0")
        assert con.execute("SHOW log_min_duration_statement").fetchone() == ("0",)
        simple(con, "SELECT 4242 AS logged_x5")
        con.execute("SELECT %s::int AS logged_x7", (7,))
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            con.execute("SET log_statement = 'loud'")
        con.execute("SET log_statement = 'none'")
        con.execute("SET log_min_duration_statement = '1min'")
        assert con.execute("SHOW log_min_duration_statement").fetchone() == ("1min",)
        simple(con, "SELECT 4343 AS unlogged_x5")
    assert log_lines(ks, "LOG:  statement: SELECT 4242 AS logged_x5")
    assert log_lines(ks, "LOG:  execute <unnamed>: SELECT $1::int AS logged_x7")
    durations = log_lines(ks, "LOG:  duration: ")
    assert any(re.search(r"LOG:  duration: \d+\.\d{3} ms$", line) for line in durations)
    assert not log_lines(ks, "unlogged_x5", timeout=0.5)


def test_non_superuser_cannot_change_log_settings(ks: KeyedServer) -> None:
    with connect(ks, "alice") as con:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
            con.execute("SET log_statement = 'none'")
        assert (
            info.value.diag.message_primary == 'permission denied to set parameter "log_statement"'
        )
        assert con.execute("SHOW log_statement").fetchone() == ("mod",)
    with pytest.raises(psycopg.OperationalError, match="permission denied to set parameter"):
        connect(ks, "alice", options="-c log_statement=none")


def test_log_statement_configured_by_environment() -> None:
    assert config.load(environ={"HATIDATA_LOG_STATEMENT": "DDL"}).log_statement == "ddl"
    with pytest.raises(ValueError, match="log_statement must be none, ddl, mod or all"):
        config.load(environ={"HATIDATA_LOG_STATEMENT": "verbose"})
