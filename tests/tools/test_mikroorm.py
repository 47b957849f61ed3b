"""MikroORM 7 (npm, pinned in tests/node/package-lock.json) over node-postgres: schema
create of two related entities (serial keys, varchar(n), boolean default, timestamptz,
numeric(10,2), jsonb, a unique constraint, an index, a foreign key with ON DELETE
CASCADE), then its schema diff twice finds nothing to do (the introspection reads
information_schema, pg_catalog and information_schema.triggers), persist / flush, find with
populate, the QueryBuilder, a transaction rolled back by a throw,
UniqueConstraintViolationException and remove with the cascade, run by
tests/tools/test_mikroorm.mjs. The same script gives the same line on PostgreSQL 15."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.conftest import start_server

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / "node"

# The script's line on PostgreSQL 15 (run there by hand).
EXPECTED = {
    "diff": "", "diff2": "", "ids": [1, 2, True],
    "found": [["Iain", ["Excession"]], ["Ursula", ["Earthsea", "Lathe"]]],
    "qb": [{"title": "Excession", "price": "12.50"}],
    "rollback": "roll back", "ghosts": 0, "unique": True, "booksLeft": ["Excession"],
}  # fmt: skip


def test_mikroorm_schema_and_entity_manager(tmp_path: Path) -> None:
    if not (NODE_DIR / "node_modules" / "@mikro-orm").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    (tmp_path / "node_modules").symlink_to(NODE_DIR / "node_modules")
    script = shutil.copy(HERE / "test_mikroorm.mjs", tmp_path / "mikroorm.mjs")
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        r = subprocess.run(
            ["node", str(script), f"postgresql://tester:x@127.0.0.1:{srv.port}/hatidata"],
            capture_output=True, text=True, timeout=180, cwd=tmp_path,
        )  # fmt: skip
    finally:
        srv.stop()
    assert r.returncode == 0, r.stderr[-4000:] + r.stdout[-2000:] + srv.log()[-4000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == EXPECTED
