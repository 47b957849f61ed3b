"""`hatiproxy lake compact`: a table loaded by many small INSERTs (each one a Parquet file
of its own, data inlining being off) is merged into one file while the proxies serve
the lake, and every proxy reads the same rows afterwards."""

from __future__ import annotations

import subprocess
import sys

import psycopg

from tests.conftest import ROOT, ServerProcess
from tests.lake.conftest import LakeCluster


def _compact(lake: LakeCluster, *tables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proxy", "lake", "compact", *tables,
         "--lake-catalog", lake.catalog, "--lake-data", str(lake.data)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_compact_merges_small_insert_files_and_proxies_read_the_same_rows(
    lake: LakeCluster, proxies: list[ServerProcess]
) -> None:
    a, b, *_ = proxies
    with psycopg.connect(a.dsn, autocommit=True) as ca:
        ca.execute("CREATE TABLE compact25_t (id INTEGER, v TEXT)")
        for i in range(12):
            ca.execute("INSERT INTO compact25_t VALUES (%s, %s)", (i, f"v{i}"))
    out = _compact(lake, "public.compact25_t")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["public.compact25_t: 12 -> 1 data files"]
    with psycopg.connect(b.dsn, autocommit=True) as cb:
        assert cb.execute("SELECT count(*), sum(id), min(v), max(v) FROM compact25_t").fetchone() == (
            12, 66, "v0", "v9",
        )  # fmt: skip
        cb.execute("INSERT INTO compact25_t VALUES (12, 'v12')")  # the table still takes writes
        assert cb.execute("SELECT count(*) FROM compact25_t").fetchone() == (13,)
        cb.execute("DROP TABLE compact25_t")


def test_compact_names_a_missing_table_and_needs_a_lake(lake: LakeCluster) -> None:
    out = _compact(lake, "no_such_table25")
    assert out.returncode == 1
    assert "the lake has no table 'no_such_table25'" in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "proxy", "lake", "compact"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 2
    assert "--lake-catalog" in out.stderr
