"""Prisma ORM 7 (npm, pinned in tests/node/package-lock.json): `prisma generate` of the
prisma-client-js generator (query compiler wasm from npm), then the client over
@prisma/adapter-pg (node-postgres) on tables made by the migration Prisma writes for
tests/tools/prisma/schema.prisma (serial ids, varchar(n), boolean/now() defaults, an enum,
text[], jsonb, numeric(10,2), a compound unique, an index, a cascading foreign key): nested
writes, include / where / orderBy / take, upsert, cascade, both kinds of $transaction,
$queryRaw / $executeRaw with parameters, P2002 / P2003, createMany, aggregate / groupBy /
count, run by tests/tools/test_prisma.js. `prisma migrate` / `db push` / `db pull` need
Prisma's native schema engine, which is fetched from Prisma's own host, not from npm: they
cannot run here (docs/compatibility.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import psycopg

from tests.conftest import start_server

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / "node"

# What the script reads back on PostgreSQL 15 (the same script, run there by hand).
EXPECTED = {
    "created": {
        "id": 1, "active": True, "role": "READER", "tags": ["sf", "fantasy"],
        "profile": {"born": 1929, "langs": ["en"]}, "dates": True,
        "posts": [["Earthsea", "9.99"], ["Lathe", "0"]],
    },
    "found": [["Iain", ["Excession"]], ["Ursula", ["Lathe", "Earthsea"]]],
    "filtered": ["Lathe"],
    "byTag": ["Ursula"],
    "byJson": ["Ursula"],
    "updated": [True, ["culture"], True],
    "upsert": ["Ann", "Ann L", True],
    "createMany": 2,
    "count": 5,
    "aggregate": ["53.49", "16", "10.70", 5],
    "groupBy": [[1, 2, "9.99"], [2, 1, "12.5"], [3, 2, "31"]],
    "p2002": "P2002",
    "p2002compound": "P2002",
    "p2003": "P2003",
    "txArray": ["T1", 4],
    "txRollback": "ROLLBACK",
    "ghosts": 0,
    "txInteractive": "T1b",
    "queryRaw": [["Ancillary Justice", "15"], ["Ancillary Sword", "16"], ["Excession", "12.5"]],
    "executeRaw": 1,
    "queryRawUnsafe": [{"n": 1}],
    "postsLeft": ["Ancillary Justice", "Ancillary Sword", "Excession"],
    "deleteMany": 1,
}  # fmt: skip


def _generate(tmp_path: Path) -> Path:
    """`prisma generate` into tmp_path/generated. The CLI insists on a schema engine binary
    even for generate, which does not use it: any existing file satisfies it. The generated
    client finds @prisma/client and the adapter through a node_modules link beside it."""
    (tmp_path / "node_modules").symlink_to(NODE_DIR / "node_modules")
    (tmp_path / "prisma").mkdir()
    shutil.copy(HERE / "prisma" / "schema.prisma", tmp_path / "prisma" / "schema.prisma")
    env = {**os.environ, "PRISMA_SCHEMA_ENGINE_BINARY": "/bin/true",
           "PRISMA_HIDE_UPDATE_MESSAGE": "1", "CHECKPOINT_DISABLE": "1"}  # fmt: skip
    r = subprocess.run(
        [str(NODE_DIR / "node_modules" / ".bin" / "prisma"), "generate",
         "--schema", "prisma/schema.prisma"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-4000:] + r.stdout[-2000:]
    return tmp_path / "generated"


def test_prisma_client_over_adapter_pg(tmp_path: Path) -> None:
    if not (NODE_DIR / "node_modules" / "prisma").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    client = _generate(tmp_path)
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        dsn = f"postgresql://tester:x@127.0.0.1:{srv.port}/hatidata"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute((HERE / "prisma" / "migration.sql").read_text())
        r = subprocess.run(
            ["node", str(HERE / "test_prisma.js"), str(client), dsn],
            capture_output=True, text=True, timeout=180, cwd=tmp_path,
        )  # fmt: skip
    finally:
        srv.stop()
    assert r.returncode == 0, r.stderr[-4000:] + r.stdout[-2000:] + srv.log()[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == EXPECTED
