"""drizzle-orm with node-postgres, and drizzle-kit (npm, pinned in
tests/node/package-lock.json): `drizzle-kit push` of tests/node/drizzle/schema.js (serial
keys, text, integer, boolean and timestamp defaults, a foreign key, an index; drizzle-kit
introspects the catalog first), then tests/node/drizzle/queries.js: insert ... returning,
select with where / join, update, delete and transactions. Every value asserted here is
what the same scripts get from PostgreSQL 15."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, psql_command, start_server

NODE_DIR = Path(__file__).resolve().parent.parent / "node"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A database of its own: `drizzle-kit push` makes the schema equal to drizzle's and
    asks before dropping anything else it finds (other modules' tables and sequences in
    the shared server, whichever modules ran there first)."""
    srv = start_server(tmp_path_factory.mktemp("drizzle"), "--database", ":memory:")
    yield srv
    srv.stop()


def test_drizzle_push_and_queries(server: ServerProcess) -> None:
    if not (NODE_DIR / "node_modules" / "drizzle-kit").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    url = f"postgres://x@{server.host}:{server.port}/hatidata"

    def push() -> str:
        r = subprocess.run(
            ["node", "node_modules/drizzle-kit/bin.cjs", "push", "--force", "--verbose",
             "--config", "drizzle/drizzle.config.js"],
            cwd=NODE_DIR, env={**os.environ, "DRIZZLE_URL": url},
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    first = push()
    assert 'CREATE TABLE "dz_authors"' in first and "Changes applied" in first, first
    # A second push reads the schema back (tables, columns, defaults such as now(), keys
    # and indexes; its catalog queries are differential cases in tool_catalogs.sql) and
    # finds it equal to drizzle's.
    second = push()
    assert "No changes detected" in second, second[-3000:]
    described = psql_command(server, "\\d dz_books")
    assert "dz_books_title_idx" in described and "dz_books_author_id_dz_authors_id_fk" in described
    r = subprocess.run(
        ["node", "drizzle/queries.js", str(server.port)],
        cwd=NODE_DIR, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr + r.stdout
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # the defaults (boolean true, timestamp now()) come back through RETURNING
    assert out["inserted"] == {"id": 1, "name": "Ursula", "active": True, "createdIsDate": True}
    assert out["insertedMany"] == [{"id": 2, "name": "Iain"}, {"id": 3, "name": "Octavia"}]
    assert out["long"] == [{"title": "Earthsea"}, {"title": "Kindred"}]
    assert out["joined"] == [
        {"author": "Ursula", "title": "Earthsea"},
        {"author": "Ursula", "title": "Lathe"},
        {"author": "Octavia", "title": "Kindred"},
    ]
    assert out["counted"] == [{"n": 3}]
    assert out["updated"] == [{"id": 2, "active": True}]
    assert out["deleted"] == 1
    assert out["rollbackError"] == "roll back"
    assert out["names"] == ["Ursula", "Iain", "Octavia", "Kept"]  # the rolled back one absent
    assert out["orphanError"] == "23503"  # the foreign key drizzle-kit added is enforced
