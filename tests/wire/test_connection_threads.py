"""Each connection on its own thread: a busy one never holds up another, and shutdown
interrupts statements that are running inside DuckDB."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest

from tests.conftest import start_server

SLOW = "SELECT count(*) FROM range(1000000000000) t(a) WHERE a % 7 = 3"


def _run_slow(conn: psycopg.Connection, outcome: list[BaseException | None]) -> None:
    try:
        conn.execute(SLOW)
        outcome.append(None)
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        outcome.append(exc)


def test_a_long_statement_does_not_hold_up_other_connections(server) -> None:  # noqa: ANN001
    with (
        psycopg.connect(server.dsn, autocommit=True) as other,
        psycopg.connect(server.dsn, autocommit=True) as busy,
    ):
        other.execute("CREATE TABLE threads_kv (id integer PRIMARY KEY, v text)")
        other.execute("INSERT INTO threads_kv SELECT g, 'v' || g FROM range(1, 1001) t(g)")
        outcome: list[BaseException | None] = []
        slow = threading.Thread(target=_run_slow, args=(busy, outcome))
        slow.start()
        time.sleep(0.5)  # the long statement is inside DuckDB now
        with other.cursor() as cur:
            for key in range(1, 201):
                cur.execute("SELECT v FROM threads_kv WHERE id = %s", (key,))
                assert cur.fetchone() == (f"v{key}",)
        assert slow.is_alive(), "200 point queries waited for the long statement"
        busy.cancel()
        slow.join(10)
        assert not slow.is_alive()
        assert isinstance(outcome[0], psycopg.errors.QueryCanceled)
        other.execute("DROP TABLE threads_kv")


def test_shutdown_interrupts_a_running_statement(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", str(tmp_path / "db.duckdb"))
    outcome: list[BaseException | None] = []
    busy = psycopg.connect(srv.dsn, autocommit=True)
    slow = threading.Thread(target=_run_slow, args=(busy, outcome))
    slow.start()
    time.sleep(0.5)
    started = time.monotonic()
    srv.stop()  # SIGTERM; stop() would kill it after 10 s
    assert srv.proc.returncode == 0, srv.log()
    assert time.monotonic() - started < 8, "shutdown waited for the running statement"
    slow.join(5)
    assert isinstance(outcome[0], psycopg.errors.AdminShutdown)  # 57P01, as Postgres says
    busy.close()


@pytest.mark.parametrize("pipelined", [False, True])
def test_statement_timeout_interrupts_only_its_own_statement(server, pipelined: bool) -> None:  # noqa: ANN001
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 300")
        with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
            if pipelined:
                with conn.pipeline():
                    conn.execute(SLOW)
            else:
                conn.execute(SLOW)
        # The next statements run in full: the watchdog's deadline went with the first.
        assert conn.execute("SELECT count(*) FROM range(3000000)").fetchone() == (3000000,)
        conn.execute("SET statement_timeout = 0")
