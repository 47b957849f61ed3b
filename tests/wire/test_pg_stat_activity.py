"""pg_stat_activity, pg_backend_pid(), pg_cancel_backend() and pg_terminate_backend():
finding a runaway query from another session and stopping it, as in PostgreSQL 15."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from tests.access.keys_cli_support import create, wait_for_channel
from tests.conftest import ServerProcess, psql_command, start_server

# Billions of rows: runs until it is interrupted (statement_timeout is the safety net).
SLOW = "SELECT count(*) FROM range(1000000000000) t(a) WHERE a % 7 = 3"
COLUMNS = (
    "datid, datname, pid, leader_pid, usesysid, usename, application_name, client_addr, "
    "client_hostname, client_port, backend_start, xact_start, query_start, state_change, "
    "wait_event_type, wait_event, state, backend_xid, backend_xmin, query_id, query, "
    "backend_type"
)


def wait_for(check: Callable[[], Any], what: str, timeout_s: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Slow:
    """SLOW running on `conn` in a thread; `error` is what it ended with."""

    def __init__(self, conn: psycopg.Connection, sql: str = SLOW) -> None:
        self.error: BaseException | None = None
        self.finished = False
        self._thread = threading.Thread(target=self._run, args=(conn, sql))
        self._thread.start()

    def _run(self, conn: psycopg.Connection, sql: str) -> None:
        try:
            conn.execute(sql)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            self.error = exc
        self.finished = True

    def join(self) -> BaseException | None:
        self._thread.join(30)
        assert not self._thread.is_alive(), "the statement was not interrupted"
        return self.error


def activity(conn: psycopg.Connection, pid: int) -> dict[str, Any] | None:
    cur = conn.execute(f"SELECT {COLUMNS} FROM pg_stat_activity WHERE pid = %s", (pid,))
    row = cur.fetchone()
    return None if row is None else dict(zip([d.name for d in cur.description], row, strict=True))


def running(conn: psycopg.Connection, pid: int, sql: str = SLOW) -> dict[str, Any]:
    return wait_for(
        lambda: (row := activity(conn, pid)) and row["state"] == "active" and row["query"] == sql
        and row,
        "the slow statement to show as active",
    )  # fmt: skip


def connect(srv: ServerProcess, **kw: Any) -> psycopg.Connection:
    kw.setdefault("autocommit", True)
    return psycopg.connect(srv.dsn, **kw)


# --- trust server (everyone is a superuser) ------------------------------------------------


def test_backend_pid_is_the_pid_sent_at_connect(server: ServerProcess) -> None:
    with connect(server) as a, connect(server) as b:
        assert a.execute("SELECT pg_backend_pid()").fetchone() == (a.info.backend_pid,)
        assert b.execute("SELECT pg_catalog.pg_backend_pid()").fetchone() == (b.info.backend_pid,)
        assert a.info.backend_pid != b.info.backend_pid


def test_connections_see_each_other(server: ServerProcess) -> None:
    with connect(server, application_name="app-a") as a, connect(server) as b:
        a.execute("SELECT 1 AS one")
        before = time.time()
        mine = "SELECT " + COLUMNS + " FROM pg_stat_activity WHERE pid IN (%s, %s) ORDER BY pid"
        cur = b.execute(mine, (a.info.backend_pid, b.info.backend_pid))
        names = [d.name for d in cur.description]
        rows = {r[2]: dict(zip(names, r, strict=True)) for r in cur.fetchall()}
        assert names == [c.strip() for c in COLUMNS.split(",")]
        ra, rb = rows[a.info.backend_pid], rows[b.info.backend_pid]
        local = socket.socket(fileno=os.dup(a.pgconn.socket))
        try:
            a_port = local.getsockname()[1]
        finally:
            local.close()
        assert ra["datid"] == 16384 and ra["datname"] == "hatidata"
        assert ra["usename"] == "tester" and ra["application_name"] == "app-a"
        assert ra["client_addr"] == "127.0.0.1" and ra["client_port"] == a_port
        assert ra["backend_type"] == "client backend" and ra["wait_event"] is None
        assert ra["state"] == "idle" and ra["query"] == "SELECT 1 AS one"
        assert ra["xact_start"] is None and ra["leader_pid"] is None
        assert ra["backend_start"] <= ra["query_start"] <= ra["state_change"]
        assert ra["state_change"].timestamp() <= before + 1
        # The querying session sees itself running this very statement.
        # As the client sent it: psycopg sent $n placeholders.
        assert rb["state"] == "active" and rb["query"] == mine.replace("%s, %s", "$1, $2")
        assert rb["xact_start"] == rb["query_start"] is not None
        assert rb["application_name"] == ""

        a.execute("SET application_name = 'renamed'")
        joined = b.execute(
            "SELECT a.application_name, d.datname FROM pg_catalog.pg_stat_activity a "
            "JOIN pg_catalog.pg_database d ON d.oid = a.datid "
            "WHERE a.pid <> pg_backend_pid() AND a.usename = current_user "
            "AND a.pid = %s ORDER BY a.backend_start",
            (a.info.backend_pid,),
        ).fetchall()
        assert joined == [("renamed", "hatidata")]


def test_psql_sees_its_own_statement(server: ServerProcess) -> None:
    out = psql_command(
        server,
        "SELECT state, usename, query FROM pg_stat_activity WHERE pid = pg_backend_pid()",
    )
    assert "active | x       | SELECT state, usename, query FROM pg_stat_activity" in out


def test_transaction_states(server: ServerProcess) -> None:
    with connect(server, autocommit=False) as a, connect(server) as b:
        pid = a.info.backend_pid
        a.execute("SELECT 2")
        row = activity(b, pid)
        assert row["state"] == "idle in transaction" and row["query"] == "SELECT 2"
        assert row["xact_start"] is not None
        a.execute("SELECT 3")
        later = activity(b, pid)
        assert later["xact_start"] == row["xact_start"] < later["query_start"]
        with pytest.raises(psycopg.errors.UndefinedTable):
            a.execute("SELECT * FROM no_such_table")
        row = activity(b, pid)
        assert row["state"] == "idle in transaction (aborted)"
        assert row["query"] == "SELECT * FROM no_such_table"
        assert row["xact_start"] is None
        a.rollback()
        row = activity(b, pid)
        assert (row["state"], row["query"], row["xact_start"]) == ("idle", "ROLLBACK", None)


def test_query_text_is_cut_at_1023_bytes(server: ServerProcess) -> None:
    with connect(server) as a, connect(server) as b:
        long_sql = "SELECT '" + "é" * 600 + "' AS long_text"  # 1200+ bytes of UTF-8
        a.execute(long_sql)
        query = activity(b, a.info.backend_pid)["query"]
        assert long_sql.startswith(query)
        assert len(query.encode()) == 1022  # 1023 would split an é


def test_cancel_interrupts_a_running_statement_and_the_session_lives(
    server: ServerProcess,
) -> None:
    with connect(server) as a, connect(server) as b:
        a.execute("SET statement_timeout = '60s'")
        slow = Slow(a)
        row = running(b, a.info.backend_pid)
        assert row["xact_start"] == row["query_start"]
        assert b.execute("SELECT pg_cancel_backend(%s)", (a.info.backend_pid,)).fetchone() == (
            True,
        )
        error = slow.join()
        assert isinstance(error, psycopg.errors.QueryCanceled)
        assert error.diag.message_primary == "canceling statement due to user request"
        assert a.execute("SELECT 42").fetchone() == (42,)
        assert activity(b, a.info.backend_pid)["state"] == "idle"
        # Cancelling an idle session does nothing to it, as in Postgres.
        assert b.execute("SELECT pg_cancel_backend(%s)", (a.info.backend_pid,)).fetchone() == (
            True,
        )
        assert a.execute("SELECT 43").fetchone() == (43,)


def test_terminate_ends_a_running_connection(server: ServerProcess) -> None:
    with connect(server) as a, connect(server) as b:
        a.execute("SET statement_timeout = '60s'")
        pid = a.info.backend_pid
        slow = Slow(a)
        running(b, pid)
        # With a timeout, it waits for the backend to be gone.
        assert b.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone() == (True,)
        error = slow.join()
        assert isinstance(error, psycopg.errors.AdminShutdown)
        assert error.sqlstate == "57P01" and error.diag.severity == "FATAL"
        assert error.diag.message_primary == "terminating connection due to administrator command"
        assert a.closed or a.broken
        assert activity(b, pid) is None


def test_terminate_ends_an_idle_connection(server: ServerProcess) -> None:
    with connect(server) as a, connect(server) as b:
        pid = a.info.backend_pid
        assert b.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)
        wait_for(lambda: activity(b, pid) is None, "the terminated backend to leave the view")
        with pytest.raises(psycopg.OperationalError) as caught:
            a.execute("SELECT 1")
        assert caught.value.sqlstate == "57P01"


def test_unknown_pid_warns_and_returns_false(server: ServerProcess) -> None:
    with connect(server) as b:
        notices: list[tuple[str, str, str]] = []
        b.add_notice_handler(lambda d: notices.append((d.severity, d.sqlstate, d.message_primary)))
        assert b.execute("SELECT pg_cancel_backend(999999)").fetchone() == (False,)
        assert b.execute("SELECT pg_terminate_backend(999998)").fetchone() == (False,)
        assert notices == [
            ("WARNING", "01000", "PID 999999 is not a PostgreSQL backend process"),
            ("WARNING", "01000", "PID 999998 is not a PostgreSQL backend process"),
        ]
        assert b.execute("SELECT pg_cancel_backend(NULL)").fetchone() == (None,)
        with pytest.raises(psycopg.errors.NumericValueOutOfRange, match="must not be negative"):
            b.execute("SELECT pg_terminate_backend(999999, -1)")


def test_signalling_oneself(server: ServerProcess) -> None:
    with connect(server) as a:
        with pytest.raises(psycopg.errors.QueryCanceled):
            a.execute("SELECT pg_cancel_backend(pg_backend_pid())")
        assert a.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.errors.AdminShutdown):
            a.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        assert a.closed or a.broken


# --- API keys: superusers and not ---------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict]]:
    """A server where `root` is a configured (super)user and two analyst keys log in."""
    tmp = tmp_path_factory.mktemp("activity_keys")
    srv = start_server(tmp, "--users", "root:rootpw", "--embedding-provider", "hash")
    wait_for_channel(srv.data_dir)  # `hatiproxy keys` reaches the running server through it
    keys = {name: create(srv.data_dir, "--role", "analyst")["raw_key"] for name in ("ro", "ro2")}
    yield srv, keys
    srv.stop()


def login(srv: ServerProcess, user: str, password: str) -> psycopg.Connection:
    return psycopg.connect(
        host=srv.host, port=srv.port, user=user, password=password, dbname="hatidata",
        autocommit=True,
    )  # fmt: skip


def test_is_superuser_tells_the_login_apart(keyed) -> None:  # noqa: ANN001
    """ParameterStatus, SHOW and current_setting say `off` for a non-admin key (ORMs and
    admin tools read it to hide superuser-only actions); a client cannot set it."""
    srv, keys = keyed
    with login(srv, "root", "rootpw") as root, login(srv, "ana", keys["ro"]) as ana:
        assert root.info.parameter_status("is_superuser") == "on"
        assert ana.info.parameter_status("is_superuser") == "off"
        assert ana.execute("SHOW is_superuser").fetchone() == ("off",)
        assert ana.execute("SELECT current_setting('is_superuser')").fetchone() == ("off",)
        with pytest.raises(psycopg.errors.CantChangeRuntimeParam):
            ana.execute("SET is_superuser = on")
    forged = psycopg.connect(
        host=srv.host, port=srv.port, user="ana", password=keys["ro"], dbname="hatidata",
        options="-c is_superuser=on",
    )  # fmt: skip
    with forged:
        assert forged.info.parameter_status("is_superuser") == "off"
        assert forged.execute("SHOW is_superuser").fetchone() == ("off",)


def test_non_superuser_sees_no_details_of_other_roles(keyed) -> None:  # noqa: ANN001
    srv, keys = keyed
    with login(srv, "root", "rootpw") as root, login(srv, "ana", keys["ro"]) as ana:
        root.execute("SELECT 'secret plan' AS plan")
        other = activity(ana, root.info.backend_pid)
        hidden = {k: v for k, v in other.items() if v is not None}
        assert hidden == {
            "datid": 16384,
            "datname": "hatidata",
            "pid": root.info.backend_pid,
            "usesysid": 16385,  # root: the first configured user after the owner (10)
            "usename": "root",
            "application_name": "",
            "query": "<insufficient privilege>",
        }
        own = activity(ana, ana.info.backend_pid)
        assert own["state"] == "active" and own["query"].startswith("SELECT datid")
        # A superuser sees everything.
        seen = activity(root, ana.info.backend_pid)
        assert seen["state"] == "idle" and seen["query"].startswith("SELECT datid")


def test_non_superuser_cannot_cancel_other_roles(keyed) -> None:  # noqa: ANN001
    srv, keys = keyed
    with (
        login(srv, "root", "rootpw") as root,
        login(srv, "ana", keys["ro"]) as ana,
        login(srv, "bea", keys["ro2"]) as bea,
    ):
        root.execute("SET statement_timeout = '60s'")
        slow = Slow(root)
        with login(srv, "root", "rootpw") as watch:
            running(watch, root.info.backend_pid)
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
                ana.execute("SELECT pg_cancel_backend(%s)", (root.info.backend_pid,))
            assert caught.value.diag.message_primary == (
                "must be a superuser to cancel superuser query"
            )
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="terminate superuser"):
                ana.execute("SELECT pg_terminate_backend(%s)", (root.info.backend_pid,))
            # Another key is another role, even under the same user name.
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
                ana.execute("SELECT pg_cancel_backend(%s)", (bea.info.backend_pid,))
            assert caught.value.diag.message_primary == (
                "must be a member of the role whose query is being canceled "
                "or member of pg_signal_backend"
            )
            impostor = login(srv, "bea", keys["ro"])
            with impostor, pytest.raises(psycopg.errors.InsufficientPrivilege, match="terminated"):
                impostor.execute("SELECT pg_terminate_backend(%s)", (bea.info.backend_pid,))
            assert not slow.finished and activity(watch, root.info.backend_pid)["state"] == "active"
            assert watch.execute(
                "SELECT pg_cancel_backend(%s)", (root.info.backend_pid,)
            ).fetchone() == (True,)
        assert isinstance(slow.join(), psycopg.errors.QueryCanceled)


def test_same_key_and_user_may_cancel_its_own_sessions(keyed) -> None:  # noqa: ANN001
    srv, keys = keyed
    with login(srv, "ana", keys["ro"]) as first, login(srv, "ana", keys["ro"]) as second:
        first.execute("SET statement_timeout = '60s'")
        slow = Slow(first)
        running(second, first.info.backend_pid)  # its own role: the query is visible
        assert second.execute(
            "SELECT pg_cancel_backend(%s)", (first.info.backend_pid,)
        ).fetchone() == (True,)
        assert isinstance(slow.join(), psycopg.errors.QueryCanceled)


def test_a_session_cannot_pose_as_another(keyed) -> None:  # noqa: ANN001
    """The session variable behind pg_backend_pid() carries a secret: forging it buys
    nothing."""
    srv, keys = keyed
    with login(srv, "root", "rootpw") as root, login(srv, "ana", keys["ro"]) as ana:
        root_pid = root.info.backend_pid
        ana.execute(f"SET VARIABLE __hati_backend = '{root_pid}:00000000'")
        assert ana.execute("SELECT pg_backend_pid()").fetchone() == (root_pid,)
        # a forged token proves no session: it is answered as a caller that is nobody,
        # who lists no session and finds none to signal
        assert ana.execute("SELECT pg_terminate_backend(%s)", (root_pid,)).fetchone() == (False,)
        signal = "SELECT __hati_signal_backend(%s, %s, 'terminate', 0)"
        assert ana.execute(signal, (f"{root_pid}:ffffffff", root_pid)).fetchone() == (False,)
        assert activity(ana, root_pid) is None
        assert root.execute("SELECT 1").fetchone() == (1,)
