"""postgres.js 3 (npm `postgres`, pinned in tests/node/package-lock.json), a client with its
own wire protocol, run by tests/tools/test_postgresjs.js against a real server and against
PostgreSQL 15: the two must print the same results. It covers the array types it reads on
connect, named prepared statements pipelined and reused with the parameter types Describe
inferred (`$1::int + $2`: the unknown side takes the other's type), statement Describe of
int8 parameters, `prepare: false`, the `types` option, dynamic insert / update / IN list /
identifier helpers, arrays, json and bigint, sql.begin with savepoints (ROLLBACK TO after an
UPDATE of a table with a serial key), sql.unsafe, sql.file, cursors, forEach, COPY
streams, bytea, `.raw()`, `sql.reserve()`, nested savepoints, a cancelled query (57014) and
integer result columns (length, strpos, array_length: a number, not an int8 string), and
sql.listen / sql.notify / pg_notify with parameters."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import start_server
from tests.differential.pgcluster import start_pg

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE.parent / "node"


def run_script(script: str, port: int) -> dict:
    r = subprocess.run(
        ["node", str(HERE / script), str(port)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, f"port {port}:\n{r.stderr[-4000:]}\n{r.stdout[-3000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_postgresjs_answers_as_postgresql(tmp_path: Path) -> None:
    if not (NODE_DIR / "node_modules" / "postgres").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    pg = start_pg()
    try:
        theirs = run_script("test_postgresjs.js", pg.port)
    finally:
        pg.stop()
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        ours = run_script("test_postgresjs.js", srv.port)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{srv.log()[-4000:]}") from None
    finally:
        srv.stop()
    assert theirs["listen"] == {"ok": ["hello", "world"]}
    assert theirs["describe"] == {
        "types": [23, 25], "columns": [["id", 23], ["name", 25], ["tags", 1009]],
    }  # fmt: skip
    assert theirs["savepointError"] == "23505" and theirs["begin"] == [7, "0"]
    assert theirs["typedParam"] == [{"b": "123456789012345679n", "n": 5}]
    assert theirs["copiedOut"].startswith("1\tone\t1.50\n2\ttwo\t\\N\n")
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
