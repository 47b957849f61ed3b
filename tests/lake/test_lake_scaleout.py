"""Several hatiproxy processes over one DuckLake (PostgreSQL 15 catalog, shared data
path; the cluster is tests/lake/conftest.py's `lake`): what one commits the next statement on another sees, conflicting writes from two
proxies end in one commit and one 40001, a proxy killed with -9 loses nothing it
acknowledged, and what DuckLake cannot store is refused with 0A000."""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import psycopg
import pytest

from tests.conftest import ROOT, ServerProcess, free_port
from tests.lake.conftest import LakeCluster


def _connect(p: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(p.dsn, autocommit=True)


def test_ddl_and_writes_on_one_proxy_are_seen_by_the_next_statement_on_another(
    proxies: list[ServerProcess],
) -> None:
    a, b, *_ = proxies
    with _connect(a) as ca, _connect(b) as cb:
        ca.execute("CREATE TABLE shared_t (id INTEGER, v TEXT)")
        ca.execute("INSERT INTO shared_t VALUES (1, 'one'), (2, 'two')")
        assert cb.execute("SELECT id, v FROM shared_t ORDER BY id").fetchall() == [
            (1, "one"),
            (2, "two"),
        ]
        cb.execute("UPDATE shared_t SET v = 'TWO' WHERE id = 2")
        cb.execute("ALTER TABLE shared_t ADD COLUMN w INTEGER")
        assert ca.execute("SELECT v, w FROM shared_t WHERE id = 2").fetchone() == ("TWO", None)
        # the catalog emulation lists the lake's tables on every proxy
        for c in (ca, cb):
            assert c.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_name = 'shared_t'"
            ).fetchall() == [("public", "shared_t")]
            assert c.execute(
                "SELECT relkind FROM pg_catalog.pg_class WHERE relname = 'shared_t'"
            ).fetchone() == ("r",)
        cb.execute("DROP TABLE shared_t")
        with pytest.raises(psycopg.errors.UndefinedTable):
            ca.execute("SELECT * FROM shared_t")


def test_conflicting_writes_from_two_proxies_one_commits_the_other_gets_40001(
    proxies: list[ServerProcess],
) -> None:
    a, b, *_ = proxies
    with _connect(a) as ca, _connect(b) as cb:
        ca.execute("CREATE TABLE account (id INTEGER, balance INTEGER)")
        ca.execute("INSERT INTO account VALUES (1, 100)")
        ca.execute("BEGIN")
        cb.execute("BEGIN")
        ca.execute("UPDATE account SET balance = balance + 10 WHERE id = 1")
        cb.execute("UPDATE account SET balance = balance + 20 WHERE id = 1")
        ca.execute("COMMIT")
        with pytest.raises(psycopg.errors.SerializationFailure) as err:
            cb.execute("COMMIT")
        assert err.value.sqlstate == "40001"
        cb.rollback()
        # the first write stands, the second was not silently applied on top or instead
        assert cb.execute("SELECT balance FROM account").fetchone() == (110,)
        assert ca.execute("SELECT balance FROM account").fetchone() == (110,)


def test_statements_ducklake_cannot_store_get_0A000_with_the_reason(
    proxies: list[ServerProcess],
) -> None:
    a = proxies[0]
    with _connect(a) as c:
        c.execute("CREATE TABLE plain (id INTEGER)")
        for sql, words, hint in [
            ("CREATE TABLE pk (id INTEGER PRIMARY KEY)", "PRIMARY KEY/UNIQUE", "NOT NULL"),
            ("CREATE TABLE uq (id INTEGER UNIQUE)", "PRIMARY KEY/UNIQUE", "NOT NULL"),
            ("CREATE INDEX plain_id ON plain (id)", "indexes", "no indexes"),
            ("CREATE SEQUENCE seq1", "sequences", "serial"),
            ("CREATE TABLE ser (id serial)", "sequences", "serial"),
            ("CREATE TABLE vc (name varchar(20))", "CHECK", "without a length"),
            ("CREATE TABLE vec (v FLOAT[4])", "DuckLake", "FLOAT[]"),
        ]:
            with pytest.raises(psycopg.errors.FeatureNotSupported) as err:
                c.execute(sql)
            assert err.value.sqlstate == "0A000", sql
            assert "DuckLake" in str(err.value) and words in str(err.value), str(err.value)
            assert hint in (err.value.diag.message_hint or ""), sql
        # what a DuckLake can store instead works
        c.execute("CREATE TABLE ok_t (id INTEGER NOT NULL, name varchar, v FLOAT[])")
        c.execute("INSERT INTO ok_t VALUES (1, 'a', [1.0, 2.0])")
        assert c.execute("SELECT id, name FROM ok_t").fetchall() == [(1, "a")]


LATE = 5.0  # seconds a change through one proxy may take to show on another here


def _search(c: psycopg.Connection, text: str) -> list[str]:
    return [
        r[0]
        for r in c.execute("SELECT content FROM search_memory(%s, top_k := 5)", (text,)).fetchall()
    ]


def test_a_memory_stored_through_one_proxy_is_found_through_another_within_a_second(
    proxies: list[ServerProcess],
) -> None:
    a, b, *_ = proxies
    text = "the lake proxies share the quarterly roadmap memory"
    with _connect(a) as ca, _connect(b) as cb:
        (mid,) = ca.execute(
            "SELECT memory_id FROM store_memory(%s, wait := true)", (text,)
        ).fetchone()
        # The target is 1 s (bench/lake_memory_visibility.py measures it: p50 0.33-0.37 s,
        # max 0.85-1.35 s at a load average of 15-18 on 2 cores); this shared box allows 5.
        stored = time.monotonic()
        found: list[str] = []
        while time.monotonic() - stored < LATE and text not in found:
            found = _search(cb, text)
        seen = time.monotonic() - stored
        assert text in found, f"not found through the other proxy within {LATE} s ({found})"
        # the whole row came along: get_memory on B reads it from B's own copy
        assert cb.execute("SELECT content FROM get_memory(%s)", (mid,)).fetchone() == (text,)
        # a delete through B reaches A the same way
        cb.execute("SELECT * FROM delete_memory(%s)", (mid,))
        deleted = time.monotonic()
        while time.monotonic() - deleted < LATE and text in _search(ca, text):
            pass
        assert text not in _search(ca, text), f"a delete through B did not reach A in {LATE} s"
    print(f"cross-proxy memory visible after {seen * 1000:.0f} ms")


def test_agent_state_is_one_store_for_all_proxies_and_concurrent_sets_lose_nothing(
    proxies: list[ServerProcess],
) -> None:
    a, b, *_ = proxies
    get = "SELECT value->>'step', version FROM get_agent_state('plan')"
    with _connect(a) as ca, _connect(b) as cb:
        ca.execute("SELECT * FROM set_agent_state('plan', '{\"step\": 1}'::JSON)")
        assert cb.execute(get).fetchone() == ("1", 1)
        # the SQL relation reads the same rows
        assert cb.execute(
            "SELECT key, version FROM _hatidata_agent_state WHERE key = 'plan'"
        ).fetchall() == [("plan", 1)]

    # two sets through each proxy at once: each gets its own version, none is lost
    def sets(p: ServerProcess, tag: str) -> list[int]:
        with _connect(p) as c:
            return [
                c.execute(
                    "SELECT version FROM set_agent_state('plan', %s::JSON)", (f'"{tag}{i}"',)
                ).fetchone()[0]
                for i in range(2)
            ]

    with ThreadPoolExecutor(2) as pool:
        versions = [
            v for f in [pool.submit(sets, a, "a"), pool.submit(sets, b, "b")] for v in f.result()
        ]
    assert sorted(versions) == [2, 3, 4, 5]
    with _connect(b) as cb:
        assert cb.execute(get).fetchone()[1] == 5
        assert cb.execute("SELECT deleted FROM delete_agent_state('plan')").fetchone() == (True,)
    with _connect(a) as ca:
        assert ca.execute("SELECT found FROM get_agent_state('plan')").fetchone() == (False,)


def test_client_sql_cannot_name_the_agent_lake_on_any_proxy(
    proxies: list[ServerProcess],
) -> None:
    for p in proxies:
        with _connect(p) as c:
            for sql in (
                "SELECT * FROM agent_lake.hatidata_internal.agent_memory",
                "SELECT * FROM hatidata_internal.agent_memory",
            ):
                with pytest.raises(psycopg.Error) as err:
                    c.execute(sql)
                assert err.value.sqlstate in ("42P01", "3F000", "42501"), sql


def test_the_lake_writes_uncompressed_version_2_parquet_files(
    proxies: list[ServerProcess], lake: LakeCluster
) -> None:
    # TPC-H through a proxy (bench/lake_tpch.py): DuckDB's default codec (snappy) took 2x
    # the local file's time, uncompressed 1.5x, and Parquet version 2 files were smaller
    # and cheaper to scan than version 1: the proxy sets both options once in the catalog
    data = lake.data
    with _connect(proxies[1]) as c:
        c.execute(
            "CREATE TABLE codec_t AS SELECT range AS id, 'row ' || range AS v FROM range(5000)"
        )
    files = [str(f) for f in data.rglob("*.parquet") if "codec_t" in str(f)]
    assert files, list(data.rglob("*"))
    reader = duckdb.connect()
    codecs = reader.execute(
        "SELECT DISTINCT compression FROM parquet_metadata(?)", [files]
    ).fetchall()
    assert codecs == [("UNCOMPRESSED",)], codecs
    versions = reader.execute(
        "SELECT DISTINCT format_version FROM parquet_file_metadata(?)", [files]
    ).fetchall()
    assert versions == [(2,)], versions
    encodings = reader.execute(
        "SELECT encodings FROM parquet_metadata(?) WHERE path_in_schema = 'id'", [files]
    ).fetchall()
    assert encodings and all(e == ("DELTA_BINARY_PACKED",) for e in encodings), encodings


def test_proxies_send_the_catalog_no_pool_health_checks(
    proxies: list[ServerProcess], lake: LakeCluster
) -> None:
    # the postgres extension's pool would send `SELECT 1` before each use of a catalog
    # connection: both lakes' pools (users' tables and the agent layer's) are set without
    pg = lake.pg
    log = Path(pg.base, "log")
    with psycopg.connect(pg.dsn, autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET log_statement = 'all'")
        admin.execute("SELECT pg_reload_conf()")
    try:
        start = log.stat().st_size
        with _connect(proxies[0]) as c:
            c.execute("CREATE TABLE IF NOT EXISTS health_t AS SELECT 1 AS id")
            deadline = time.monotonic() + 1.0  # agent-lake pollers run 4 times a second
            while time.monotonic() < deadline:
                assert c.execute("SELECT id FROM health_t WHERE id = 1").fetchall() == [(1,)]
        with log.open() as f:
            f.seek(start)
            statements = [line for line in f if "statement:" in line]
    finally:
        with psycopg.connect(pg.dsn, autocommit=True) as admin:
            admin.execute("ALTER SYSTEM RESET log_statement")
            admin.execute("SELECT pg_reload_conf()")
    assert any("ducklake_snapshot" in s for s in statements), statements[:5]
    assert not [s for s in statements if s.rstrip().endswith("statement: SELECT 1")]


# A proxy killed with -9 loses nothing it acknowledged: test_lake_ledger.py (one extra
# proxy for users' rows and ledger steps).


def test_an_unreachable_catalog_stops_the_start_in_one_line_without_the_password(
    tmp_path: Path,
) -> None:
    catalog = f"postgres:host=127.0.0.1 port={free_port()} dbname=lake password=s3cret"
    out = subprocess.run(
        [sys.executable, "-m", "proxy", "serve", "--data-dir", str(tmp_path),
         "--port", str(free_port()), "--mcp-port", "0", "--rest-port", "0",
         "--embedding-provider", "hash", "--lake-catalog", catalog,
         "--lake-data", str(tmp_path / "lake")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("hatiproxy: cannot open the DuckLake catalog"), out.stderr
    assert "password=***" in last and "s3cret" not in out.stderr + out.stdout
