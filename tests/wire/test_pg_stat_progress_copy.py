"""pg_stat_progress_copy: a long COPY FROM STDIN / TO STDOUT is watched from another session
as in PostgreSQL 15 (its counters move while the data flows; the row goes when it ends), and
a role sees only the pid and database of another role's COPY."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.access.keys_cli_support import create, wait_for_channel
from tests.conftest import ServerProcess, start_server
from tests.wire.test_pg_stat_activity import login, wait_for

COLUMNS = (
    "pid, datid, datname, relid, command, type, bytes_processed, bytes_total, "
    "tuples_processed, tuples_excluded"
)
LINE = 40  # bytes of every COPY text line written below


def progress(conn: psycopg.Connection, pid: int) -> dict[str, Any] | None:
    cur = conn.execute(f"SELECT {COLUMNS} FROM pg_stat_progress_copy WHERE pid = %s", (pid,))
    row = cur.fetchone()
    return None if row is None else dict(zip([d.name for d in cur.description], row, strict=True))


def lines(start: int, count: int) -> bytes:
    out = b"".join(b"%08d\t%s\n" % (i, b"x" * (LINE - 10)) for i in range(start, start + count))
    assert len(out) == LINE * count
    return out


def test_copy_from_stdin_counts_bytes_and_rows_as_they_arrive(server: ServerProcess) -> None:
    with (
        psycopg.connect(server.dsn, autocommit=True) as c,
        psycopg.connect(server.dsn, autocommit=True) as watcher,
    ):
        c.execute("CREATE TABLE prog_in (id int, v text)")
        oid = c.execute("SELECT 'prog_in'::regclass::oid").fetchone()[0]
        pid = c.info.backend_pid
        with c.cursor().copy("COPY prog_in FROM STDIN") as cp:
            cp.write(lines(0, 5000))  # 200 KB: more than libpq holds back
            first = wait_for(
                lambda: (p := progress(watcher, pid)) and p["bytes_processed"] >= 100_000 and p,
                "the COPY's first bytes to be counted",
            )
            assert first["relid"] == oid and first["datname"] == "hatidata"
            assert (first["command"], first["type"]) == ("COPY FROM", "PIPE")
            assert (first["bytes_total"], first["tuples_excluded"]) == (0, 0)
            # every complete line read is a row counted; a line cut by the network is not
            assert first["tuples_processed"] == first["bytes_processed"] // LINE
            cp.write(lines(5000, 5000))
            later = wait_for(
                lambda: (
                    (p := progress(watcher, pid)) and p["bytes_processed"] == 10_000 * LINE and p
                ),
                "the rest of the data to be counted",
            )
            assert later["tuples_processed"] == 10_000
        assert progress(watcher, pid) is None  # ended: no row, as in PostgreSQL
        assert c.execute("SELECT count(*) FROM prog_in").fetchone() == (10_000,)


@pytest.mark.parametrize("source", ["prog_out", "(SELECT id, v FROM prog_out)"])
def test_copy_to_stdout_counts_rows_sent(server: ServerProcess, source: str) -> None:
    with (
        psycopg.connect(server.dsn, autocommit=True) as c,
        psycopg.connect(server.dsn, autocommit=True) as watcher,
    ):
        c.execute(
            "CREATE TABLE IF NOT EXISTS prog_out AS "
            "SELECT i AS id, repeat('y', 40) AS v FROM range(1000000) t(i)"
        )
        oid = c.execute("SELECT 'prog_out'::regclass::oid").fetchone()[0]
        pid = c.info.backend_pid
        got = 0
        with c.cursor().copy(f"COPY {source} TO STDOUT") as cp:
            got += len(cp.read())  # then the client stops reading: the server must wait
            seen = wait_for(
                lambda: (p := progress(watcher, pid)) and p["tuples_processed"] > 0 and p,
                "the COPY TO to be listed",
            )
            assert seen["relid"] == (oid if source == "prog_out" else 0)
            assert (seen["command"], seen["type"], seen["bytes_total"]) == ("COPY TO", "PIPE", 0)
            assert seen["tuples_processed"] < 1_000_000  # still running
            # each line: the id, a tab, 40 bytes, a newline
            assert seen["bytes_processed"] >= seen["tuples_processed"] * 43
            while data := cp.read():
                got += len(data)
        assert progress(watcher, pid) is None
        assert got == sum(len(str(i)) + 42 for i in range(1_000_000))


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    """A server where `root` is a configured (super)user and an analyst key logs in."""
    srv = start_server(
        tmp_path_factory.mktemp("progress_keys"), "--users", "root:rootpw",
        "--embedding-provider", "hash",
    )  # fmt: skip
    wait_for_channel(srv.data_dir)
    key = create(srv.data_dir, "--role", "analyst")["raw_key"]
    yield srv, key
    srv.stop()


def test_another_roles_copy_shows_only_its_pid_and_database(keyed) -> None:  # noqa: ANN001
    srv, key = keyed
    with (
        login(srv, "root", "rootpw") as root,
        login(srv, "root", "rootpw") as watch,
        login(srv, "ana", key) as ana,
    ):
        root.execute("CREATE TABLE prog_secret (id int, v text)")
        pid = root.info.backend_pid
        with root.cursor().copy("COPY prog_secret FROM STDIN") as cp:
            cp.write(lines(0, 5000))
            wait_for(lambda: progress(watch, pid), "root's COPY to be listed")
            hidden = progress(ana, pid)
            assert hidden is not None
            assert {k: v for k, v in hidden.items() if v is not None} == {
                "pid": pid,
                "datid": 16384,
                "datname": "hatidata",
            }
            assert progress(watch, pid)["command"] == "COPY FROM"  # a superuser sees it all
