"""Sequelize 6 over node-postgres (npm, pinned in tests/node/package-lock.json), run by
tests/tools/test_sequelize.js against hatiproxy and against PostgreSQL 15, whose outputs
must agree: models with a serial key, STRING(n), TEXT, BOOLEAN, DECIMAL, DATE, JSONB, an
ENUM (created in a `DO '... EXCEPTION WHEN duplicate_object THEN null; END'` block), a
unique index and associations; `sync()` twice and `sync({ alter: true })` twice (the
statements each pass sends are compared: Sequelize's alter sends the same ALTERs on every
pass, against PostgreSQL too, adding one more unnamed UNIQUE each time);
queryInterface.describeTable / showIndex (name[] columns: node-postgres leaves them as
'{a,b}' text, which Sequelize parses) / getForeignKeyReferencesForTable; CRUD with
includes, a cascade, a rolled-back transaction, UniqueConstraintError,
ForeignKeyConstraintError, and raw queries with replacements (Dates as
'... +00:00' strings)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import start_server
from tests.differential.pgcluster import start_pg

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / "node"


def _run(port: int, user: str, database: str) -> tuple[dict[str, Any] | None, str]:
    r = subprocess.run(
        ["node", str(HERE / "test_sequelize.js"), str(port), user, database],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    if r.returncode != 0:
        return None, r.stderr[-4000:] + r.stdout[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), ""


def _comparable(out: dict[str, Any]) -> dict[str, Any]:
    """What may differ without a query asking for an order: the order of describeTable's
    columns and enum labels (no ORDER BY in Sequelize's query) and of the alter passes'
    statements (one per column, in describeTable's order)."""
    out = dict(out)
    out["alter1"], out["alter2"] = sorted(out["alter1"]), sorted(out["alter2"])
    out["describe"] = {
        k: {**v, "special": sorted(v["special"])} for k, v in sorted(out["describe"].items())
    }
    return out


def test_sequelize_sync_alter_introspection_and_models(tmp_path: Path) -> None:
    if not (NODE_DIR / "node_modules" / "sequelize").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        ours, error = _run(srv.port, "tester", "hatidata")
    finally:
        srv.stop()
    assert ours is not None, error + srv.log()[-4000:]
    pg = start_pg()
    try:
        theirs, error = _run(pg.port, "postgres", "postgres")
    finally:
        pg.stop()
    assert theirs is not None, error

    # what a user relies on, whatever PostgreSQL does
    assert any("EXCEPTION WHEN duplicate_object" in s for s in ours["alter2"])
    assert ours["describe"]["genre"]["type"] == "USER-DEFINED"
    assert sorted(ours["describe"]["genre"]["special"]) == ["crime", "fantasy", "sf"]
    assert ours["describe"]["name"]["type"] == "CHARACTER VARYING(100)"
    assert ours["indexes"] == [
        {"name": "sq_books_pkey", "unique": True, "primary": True, "fields": ["id"]},
        {"name": "sq_books_title__author_id", "unique": True, "primary": False,
         "fields": ["title", "AuthorId"]},
    ]  # fmt: skip
    assert ours["fks"] == [["BookId", "sq_books", "id"], ["TagId", "sq_tags", "id"]]
    assert ours["constraints"] == [
        ["sq_authors_name_key", "u"], ["sq_authors_name_key1", "u"],
        ["sq_authors_name_key2", "u"], ["sq_authors_pkey", "p"],
    ]  # fmt: skip
    assert ours["found"][1]["books"] == [["Earthsea", 200, ["classic"]], ["Lathe", 0, []]]
    assert ours["rollbackError"] == "roll back" and ours["ghosts"] == 0
    assert ours["duplicate"] == ["SequelizeUniqueConstraintError", "23505"]
    assert ours["foreignKey"] == ["SequelizeForeignKeyConstraintError", "23503"]
    assert ours["booksLeft"] == ["Earthsea", "Lathe"]  # the cascade took Excession
    assert ours["joinRows"] == [{"n": 1}]  # and its tags' join rows
    # a second sync({ alter: true }) sends what the first did, as against PostgreSQL
    assert sorted(ours["alter2"]) == sorted(ours["alter1"])

    mine, pgs = _comparable(ours), _comparable(theirs)
    for key in pgs:
        assert mine[key] == pgs[key], f"{key}: hatiproxy {mine[key]!r}\nPostgreSQL {pgs[key]!r}"
