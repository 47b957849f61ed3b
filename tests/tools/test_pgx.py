"""Go's PostgreSQL drivers -- pgx v4 (Debian golang-github-jackc-pgx-v4-dev: extended
protocol with binary formats, its statement cache, pipelined batches, binary COPY) and
lib/pq through database/sql (golang-github-lib-pq-dev) -- built offline from Debian's Go
sources (tests/go/pgx_script.go) and run against PostgreSQL 15 and a hatiproxy server:
every step's result (or SQLSTATE) compared."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).resolve().parents[1] / "go" / "pgx_script.go"
GOPATH = Path("/usr/share/gocode")

# Steps whose result differs from PostgreSQL 15's, each named in docs/compatibility.md
# ("What differs"); the test fails when one starts to match, so the list stays true.
KNOWN_DIFFERENCES: dict[str, str] = {
    "batch": "a 23505 against a row of the same transaction names no constraint / table",
    "tx": "a 23505 against a row of the same transaction (a savepoint) names no constraint / table",
    "scalars": "numeric::text of 99.50 is '99.5000000000' (DuckDB's DECIMAL scale)",
    "pq_query": "a numeric column stores 1.50 and returns 1.5 (the scale is not kept)",
    "query_rows": "`g * $1` over generate_series's column: $1 is described as text "
    "(the column type of a table function is not inferred), pgx cannot encode an int",
}


def build(tmp_path: Path) -> Path:
    """The Go program built in GOPATH mode from Debian's sources (no module proxy here)."""
    go = shutil.which("go")
    pgx = GOPATH / "src/github.com/jackc/pgx/v4"
    pq = GOPATH / "src/github.com/lib/pq"
    if go is None or not pgx.is_dir() or not pq.is_dir():
        raise AssertionError(
            "Go or its drivers are missing: apt-get install golang-go "
            "golang-github-jackc-pgx-v4-dev golang-github-lib-pq-dev"
        )
    binary = tmp_path / "pgx_script"
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": str(GOPATH), "GOFLAGS": ""}
    env.setdefault("GOCACHE", str(tmp_path / "gocache"))
    r = subprocess.run(
        [go, "build", "-o", str(binary), str(SCRIPT)],
        cwd=SCRIPT.parent, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return binary


def test_pgx_and_lib_pq_match_postgres(tmp_path: Path) -> None:
    binary = build(tmp_path)
    theirs, ours = run_on_postgres_and_hatiproxy(
        "go", SCRIPT, tmp_path, lambda h, p, u, d: [h, str(p), u, d], binary=binary
    )
    # PostgreSQL's own run is the reference: every step succeeded there
    assert theirs["copy_from"][:2] == [10000, 10000]
    assert theirs["pool"] == [10, 510, 1010, 1510, 2010, 2510, 3010, 3510]
    assert theirs["cancel"] == ["deadline", True, 1]
    assert theirs["pq_copy"] == [100, "c\t199"]
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    same = {k: ours[k] for k in theirs if k not in KNOWN_DIFFERENCES}
    assert same == {k: theirs[k] for k in same}
    for step in KNOWN_DIFFERENCES:
        assert ours[step] != theirs[step], f"{step} now matches PostgreSQL: update the docs"
