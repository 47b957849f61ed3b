"""psql's `Asynchronous notification ...` lines for one LISTEN / NOTIFY script, from
hatiproxy and from PostgreSQL 15 (the PIDs: the session's own, as BackendKeyData gave)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest

from tests.conftest import ServerProcess
from tests.differential.pgcluster import PgCluster, start_pg

SCRIPT = """\
LISTEN psql_chan;
NOTIFY psql_chan, 'first';
SELECT pg_notify('psql_chan', 'second');
BEGIN;
NOTIFY psql_chan, 'in block';
NOTIFY psql_chan;
SELECT 'block still open';
COMMIT;
SELECT pg_listening_channels();
UNLISTEN *;
NOTIFY psql_chan, 'unheard';
SELECT 'end';
"""


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = start_pg()
    yield cluster
    cluster.stop()


def _psql(port: int, user: str, database: str) -> str:
    r = subprocess.run(
        ["psql", "-X", "-At", "-h", "127.0.0.1", "-p", str(port), "-U", user, "-d", database,
         "-c", "SELECT pg_backend_pid()", "-f", "-"],
        input=SCRIPT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    pid, _, rest = r.stdout.partition("\n")
    return rest.replace(f"PID {pid}.", "PID <own>.")


def test_psql_prints_notifications_as_with_postgres(server: ServerProcess, pg: PgCluster) -> None:
    ours = _psql(server.port, "tester", "hatidata")
    theirs = _psql(pg.port, "postgres", "postgres")
    assert ours == theirs
    assert re.findall(r'notification "psql_chan" with payload "([^"]*)"', ours) == [
        "first",
        "second",
        "in block",
    ]
    # an empty payload: psql leaves out `with payload`
    assert 'Asynchronous notification "psql_chan" received from server process' in ours
