"""TypeORM 0.3 over node-postgres (npm, pinned in tests/node/package-lock.json): schema
synchronisation of two related entities (serial keys, varchar(n), text, boolean and
jsonb columns, `now()` and `uuid_generate_v4()` defaults, a unique constraint, an index, a
foreign key with ON DELETE CASCADE), then a second look that must find nothing to change
(what `typeorm migration:generate` relies on: TypeORM reads the schema back through
information_schema, pg_catalog, quoted `"regtype"` casts and `SELECT * FROM
current_schema()`), repositories, relations, the query builder and transactions, run by
tests/tools/test_typeorm.js against a real server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import start_server

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / "node"


def test_typeorm_synchronize_and_repositories(tmp_path: Path) -> None:
    if not (NODE_DIR / "node_modules" / "typeorm").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        r = subprocess.run(
            ["node", str(HERE / "test_typeorm.js"), str(srv.port)],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
    finally:
        srv.stop()
    assert r.returncode == 0, r.stderr[-4000:] + r.stdout[-2000:] + srv.log()[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # read back, the schema is what TypeORM wrote: nothing left to change
    assert out["pendingUp"] == []
    assert out["savedAuthor"] == {"id": 1, "active": True, "createdIsDate": True}
    assert out["found"] == {
        "name": "Ursula", "meta": {"tags": ["sf"]}, "books": ["Earthsea", "Lathe"],
        "uidLength": 36,
    }  # fmt: skip
    assert out["byPrice"] == [["Excession", "12.50"]]
    assert out["counts"] == [{"name": "Iain", "n": "1"}, {"name": "Ursula", "n": "2"}]
    assert out["updated"] == "7.25"
    assert out["rollbackError"] == "roll back" and out["ghosts"] == 0
    assert out["duplicate"] == "23505"
    assert out["booksLeft"] == ["Earthsea", "Lathe"]  # the cascade took Excession
