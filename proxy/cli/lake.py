"""`hatiproxy lake compact [TABLE ...]`: maintenance of a DuckLake the proxies serve."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from proxy.core import config


def _run(args: argparse.Namespace) -> int:
    import duckdb

    from proxy.db.lake import LakeUnavailable, attach_lake, compact_lake, detach_lake

    cfg = config.load(args)
    if not cfg.lake_catalog:
        print(
            "hatiproxy lake: no lake: give --lake-catalog (or HATIDATA_LAKE_CATALOG, "
            "lake_catalog in the config file) as for `hatiproxy serve`",
            file=sys.stderr,
        )
        return 2
    conn = duckdb.connect()
    try:
        local = attach_lake(conn, cfg.lake_catalog, cfg.lake_data)
        try:
            for table, before, after in compact_lake(conn, args.tables):
                print(f"{table}: {before} -> {after} data files")
        finally:
            detach_lake(conn, local)
    except (LakeUnavailable, duckdb.Error) as exc:
        print(f"hatiproxy lake: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    return 0


def add_lake_command(sub: Any) -> None:
    parser = sub.add_parser("lake", help="DuckLake maintenance (the --lake-catalog lake)")
    lake_sub = parser.add_subparsers(dest="lake_command", required=True)
    compact = lake_sub.add_parser(
        "compact",
        help="merge each table's small data files (every INSERT writes one); running proxies "
        "read the merged files from their next statement",
    )
    compact.add_argument("tables", nargs="*", help="'name' or 'schema.name'; default: all")
    compact.add_argument("--config", help="TOML config file")
    compact.add_argument("--lake-catalog", dest="lake_catalog", default=None)
    compact.add_argument("--lake-data", dest="lake_data", default=None)
    compact.set_defaults(func=_run)
