"""knex 3 over node-postgres (npm, pinned in tests/node/package-lock.json): migrations,
the schema builder, insert().returning(), queries, updates, deletes and transactions,
run by tests/tools/test_knex.js against a real server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import start_server

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / "node"


def _knex(port: int, *mode: str) -> dict:
    if not (NODE_DIR / "node_modules" / "knex").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    r = subprocess.run(
        ["node", str(HERE / "test_knex.js"), str(port), *mode],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_knex_migrations_and_queries(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        out = _knex(srv.port)
    finally:
        srv.stop()
    assert out["migrated"] == ["001_authors", "002_books"]
    assert out["migratedAgain"] == []  # knex_migrations remembers them
    assert out["hasBooks"] and out["hasAge"]
    # insert().returning('*') on a table with timestamps(): every column, dates as Dates
    assert out["inserted"] == [
        {"id": 1, "name": "Ursula", "age": 88, "createdIsDate": True, "updatedIsDate": True}
    ]
    assert out["insertedMany"] == [{"id": 2, "name": "Iain"}, {"id": 3, "name": "Octavia"}]
    assert out["bookIds"] == [1, 2]
    assert out["older"] == [{"name": "Ursula", "age": 88}, {"name": "Octavia", "age": 58}]
    assert out["joined"] == [{"title": "Earthsea"}, {"title": "Lathe"}]
    assert out["counted"] == {"n": "2"}  # count(*) is bigint: node-postgres gives a string
    assert out["updated"] == [{"id": 2, "age": 51}]
    assert out["updateCount"] == 2
    assert out["deleted"] == 1
    assert out["rollbackError"] == "roll back" and out["ghosts"] == 0
    assert out["kept"] == 1
    assert out["names"] == ["Ursula", "Iain", "Kept"]
    assert out["rolledBack"] == ["002_books", "001_authors"]
    assert out["hasBooksAfter"] is False


def test_knex_foreign_key_migration(tmp_path: Path) -> None:
    """t.foreign(...).references(...): knex sends ALTER TABLE ... ADD CONSTRAINT ...
    FOREIGN KEY after CREATE TABLE; an orphan row is then refused (23503)."""
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        out = _knex(srv.port, "foreign")
    finally:
        srv.stop()
    assert out["migrated"] == ["001_shelves", "002_slots"]
    assert out.get("orphanError") == "23503", out
    assert out["rolledBack"] == ["002_slots", "001_shelves"]
