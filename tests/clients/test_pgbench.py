"""pgbench 15 initialises its tables on hatiproxy: `drop table if exists a, b, ...`,
`truncate table a, b, ...`, COPY, `vacuum analyze t` (no rows), primary keys."""

from __future__ import annotations

import os
import subprocess

import pytest

PGBENCH = "/usr/lib/postgresql/15/bin/pgbench"

pytestmark = pytest.mark.skipif(not os.path.exists(PGBENCH), reason="pgbench 15 not installed")


def test_pgbench_initialises(server) -> None:
    args = [PGBENCH, "-i", "-s", "1", "-h", server.host, "-p", str(server.port), "-U", "x"]
    for _ in range(2):  # the second run drops and truncates what the first made
        out = subprocess.run([*args, "hatidata"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
