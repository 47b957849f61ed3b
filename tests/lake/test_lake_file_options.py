"""The Parquet layout and reader settings hatiproxy gives a DuckLake at attach
(proxy/db/lake.py), on a real DuckLake with a DuckDB-file catalog (the PostgreSQL one
is covered through the proxies in test_lake_scaleout.py)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import psycopg

from proxy.db.lake import _default_file_options, attach_lake, detach_lake, load_lake_extensions
from tests.lake.conftest import LakeCluster


def _files(conn: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        f
        for (f,) in conn.execute(
            f"SELECT data_file FROM ducklake_list_files('lake', '{table}')"
        ).fetchall()
    ]


def test_a_new_lake_gets_version_2_uncompressed_files_and_cached_footers(tmp_path: Path) -> None:
    conn = duckdb.connect()
    local = attach_lake(conn, str(tmp_path / "catalog.ducklake"), str(tmp_path / "data"))
    conn.execute("CREATE TABLE t AS SELECT range AS id FROM range(1000)")
    files = _files(conn, "t")
    assert conn.execute(
        "SELECT DISTINCT format_version FROM parquet_file_metadata(?)", [files]
    ).fetchall() == [(2,)]
    assert conn.execute(
        "SELECT DISTINCT compression FROM parquet_metadata(?)", [files]
    ).fetchall() == [("UNCOMPRESSED",)]
    # lake files never change in place, so their footers are parsed once per process
    assert conn.execute("SELECT current_setting('parquet_metadata_cache')").fetchone() == (True,)
    detach_lake(conn, local)


def test_an_operators_stored_file_options_are_kept(tmp_path: Path) -> None:
    catalog, data = str(tmp_path / "catalog.ducklake"), str(tmp_path / "data")
    with duckdb.connect() as operator:
        operator.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{data}')")
        operator.execute("CALL lake.set_option('parquet_version', '1')")
        operator.execute("CALL lake.set_option('parquet_compression', 'zstd')")
    conn = duckdb.connect()
    local = attach_lake(conn, catalog, data)
    conn.execute("CREATE TABLE t AS SELECT range AS id FROM range(1000)")
    files = _files(conn, "t")
    assert conn.execute(
        "SELECT DISTINCT format_version FROM parquet_file_metadata(?)", [files]
    ).fetchall() == [(1,)]
    assert conn.execute(
        "SELECT DISTINCT compression FROM parquet_metadata(?)", [files]
    ).fetchall() == [("ZSTD",)]
    detach_lake(conn, local)


def test_options_another_proxy_sets_after_this_one_attached_apply_to_its_files(
    tmp_path: Path, lake: LakeCluster
) -> None:
    # DuckLake keeps the options it read at ATTACH: a proxy that attached just before
    # another (started at the same moment) stored them found them stored, set nothing,
    # and wrote Parquet version 1 files (CI saw it in test_lake_scaleout.py)
    with psycopg.connect(lake.pg.dsn, autocommit=True) as admin:
        admin.execute("CREATE DATABASE options_race")
    catalog = lake.pg.dsn.replace("dbname=postgres", "dbname=options_race")
    data = str(tmp_path / "data")
    late = duckdb.connect()
    load_lake_extensions(late)
    late.execute(f"ATTACH 'ducklake:postgres:{catalog}' AS lake (DATA_PATH '{data}')")
    first = duckdb.connect()
    detach_lake(first, attach_lake(first, f"postgres:{catalog}", data))  # stores both
    first.close()
    _default_file_options(late)  # what attach_lake does after its ATTACH
    late.execute("CREATE TABLE lake.t AS SELECT range AS id FROM range(1000)")
    files = _files(late, "t")
    assert late.execute(
        "SELECT DISTINCT format_version FROM parquet_file_metadata(?)", [files]
    ).fetchall() == [(2,)]
    assert late.execute(
        "SELECT DISTINCT compression FROM parquet_metadata(?)", [files]
    ).fetchall() == [("UNCOMPRESSED",)]
    late.close()
