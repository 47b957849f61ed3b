"""What the pg_dump round-trip tests share: PostgreSQL 15's client programs, filling a
server with a schema, a plain dump, and the dump's text without what differs by server."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import psycopg
import pytest

BIN = Path("/usr/lib/postgresql/15/bin")


def pg_tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: apt-get install postgresql-client-15 (.ci/run does)")
    return str(path)


def fill(dsn: str, statements: Sequence[str]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)  # type: ignore[arg-type]  # test SQL


def plain_dump(dsn: str) -> str:
    out = subprocess.run(
        [pg_tool("pg_dump"), "-Fp", "--no-owner", dsn], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def dump_body(dump: str) -> str:
    """The dump without what differs by server and run: the \\restrict key, the version
    line, the search_path setting and the public schema's entry."""
    dump = re.sub(r"\\(un)?restrict \S+", "", dump)
    dump = re.sub(r"-- Dumped from database version .*", "", dump)
    dump = re.sub(r"SELECT pg_catalog.set_config\('search_path'.*", "", dump)
    dump = re.sub(r"--\n-- Name: public; Type: SCHEMA;.*?initdb creates it\n", "", dump, flags=re.S)
    return re.sub(r"\n{3,}", "\n\n", dump)
