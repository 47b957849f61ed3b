"""node-postgres `client.on('notification')`: tests/node/notify.js against the shared
server, and the same script against PostgreSQL 15."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from tests.clients.test_node import NODE_DIR
from tests.conftest import ServerProcess
from tests.differential.pgcluster import PgCluster, start_pg


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = start_pg()
    yield cluster
    cluster.stop()


def _run(port: int, user: str, database: str) -> list[dict]:
    if not (NODE_DIR / "node_modules" / "pg").is_dir():  # first run on a fresh checkout
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    r = subprocess.run(
        ["node", "notify.js", str(port), user, database],
        cwd=NODE_DIR, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.startswith("ok "), r.stdout
    return json.loads(r.stdout[3:])


def test_node_postgres_notifications(server: ServerProcess, pg: PgCluster) -> None:
    expected = [
        {"channel": "node_chan", "payload": "one", "pidIsNotifier": True},
        {"channel": "node_chan", "payload": "two", "pidIsNotifier": True},
    ]
    assert _run(server.port, "tester", "hatidata") == expected
    assert _run(pg.port, "postgres", "postgres") == expected
