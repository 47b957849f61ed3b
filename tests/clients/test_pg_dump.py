"""pg_dump 15 against hatiproxy: its session preamble (SET statement_timeout, row_security,
synchronize_seqscans, ..., SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY)
is accepted. A full dump is not yet: pg_dump then reads catalog columns hatiproxy's
pg_catalog lacks (`tableoid` of pg_extension first)."""

from __future__ import annotations

import os
import subprocess

import pytest

PG_DUMP = "/usr/lib/postgresql/15/bin/pg_dump"

pytestmark = pytest.mark.skipif(not os.path.exists(PG_DUMP), reason="pg_dump 15 not installed")


def test_pg_dump_preamble_is_accepted(server) -> None:
    out = subprocess.run(
        [PG_DUMP, "-h", server.host, "-p", str(server.port), "-U", "x", "hatidata"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if out.returncode == 0:
        return
    # It got past the settings and the transaction to its catalog queries.
    assert "configuration parameter" not in out.stderr, out.stderr
    assert "Query was: SET" not in out.stderr, out.stderr
    assert "Query was: SELECT" in out.stderr, out.stderr
