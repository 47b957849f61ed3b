"""An organisation is the boundary of what a key learns about other sessions:
pg_stat_activity and pg_stat_progress_copy list only the sessions of the key's own
organisation (superusers list every one), another organisation's pid is signalled as an
unknown one, and SQL over MCP / REST lists no session."""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import connect, keyed_server, mcp_query


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    yield from keyed_server(tmp_path_factory)


def _pids(con: psycopg.Connection, view: str = "pg_stat_activity") -> set[int]:
    return {r[0] for r in con.execute(f"SELECT pid FROM {view}").fetchall()}


def test_a_key_lists_only_its_own_organisations_sessions(ks: KeyedServer) -> None:
    with (
        connect(ks, "alice") as alice,
        connect(ks, "adma") as adma,
        connect(ks, "bob") as bob,
        connect(ks, "root") as root,
    ):
        a, a2, b, r = (c.info.backend_pid for c in (alice, adma, bob, root))
        root.execute("SET application_name = 'operator console'")
        assert {a, a2} <= _pids(alice) and not {b, r} & _pids(alice)
        assert b in _pids(bob) and not {a, a2, r} & _pids(bob)
        # an organisation's admin key is no exception
        assert not {b, r} & _pids(adma)
        assert {a, a2, b, r} <= _pids(root)  # a superuser lists every session
        names = {x[0] for x in bob.execute("SELECT application_name FROM pg_stat_activity")}
        assert "operator console" not in names


def test_another_organisations_pid_is_signalled_as_unknown(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice, connect(ks, "bob") as bob:
        notices: list[str] = []
        bob.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        pid = alice.info.backend_pid
        for fn in ("pg_cancel_backend", "pg_terminate_backend"):
            assert bob.execute(f"SELECT {fn}(%s)", (pid,)).fetchone() == (False,)
        assert notices == [f"PID {pid} is not a PostgreSQL backend process"] * 2
        assert alice.execute("SELECT 1").fetchone() == (1,)  # untouched


def test_another_organisations_copy_is_not_listed(ks: KeyedServer) -> None:
    with connect(ks, "alice") as alice, connect(ks, "adma") as adma, connect(ks, "bob") as bob:
        alice.execute("CREATE TABLE sess_copy (id int)")
        with alice.cursor().copy("COPY sess_copy FROM STDIN") as cp:
            cp.write(b"".join(b"%d\n" % i for i in range(50_000)))
            pid = alice.info.backend_pid
            for _ in range(200):
                if pid in _pids(adma, "pg_stat_progress_copy"):
                    break
            assert pid in _pids(adma, "pg_stat_progress_copy")
            assert pid not in _pids(bob, "pg_stat_progress_copy")


def test_sql_over_mcp_lists_no_session(ks: KeyedServer) -> None:
    with connect(ks, "alice"):
        error, text = mcp_query(ks, "alice", "SELECT count(*) AS n FROM pg_stat_activity")
        assert not error and json.loads(text) == [{"n": 0}], text
