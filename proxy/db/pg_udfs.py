"""PostgreSQL's sha224 / sha384 / sha512 (bytea -> bytea) as Python UDFs.

DuckDB has md5, sha1 and sha256 only (sqlglot writes every sha2 variant as SHA256, a
silently different hash); the transpiler (transpiler/pg_functions_more.py) and pgcrypto's
digest() (80_hati_functions.sql) call these `__hati_` names.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable

import duckdb
from duckdb import sqltypes

ALGORITHMS = ("sha224", "sha384", "sha512")


def _digest(algo: str) -> Callable[[bytes], bytes]:
    def digest(data: bytes) -> bytes:  # DuckDB counts the parameters of the signature
        return hashlib.new(algo, data).digest()

    return digest


def _file_bytes(path: str) -> int:
    total = 0
    for name in (path, path + ".wal"):
        with contextlib.suppress(OSError):  # no WAL (checkpointed)
            total += os.stat(name).st_size
    return total


def register(conn: duckdb.DuckDBPyConnection) -> None:
    """Create the functions on `conn`'s database; before the catalog SQL uses them."""
    for algo in ALGORITHMS:
        # Installed before on this database: keep that registration (see
        # backend_functions._create).
        with contextlib.suppress(duckdb.NotImplementedException, duckdb.CatalogException):
            conn.create_function(
                f"__hati_udf_{algo}",
                _digest(algo),
                [sqltypes.BLOB],
                sqltypes.BLOB,
                side_effects=False,
            )
    with contextlib.suppress(duckdb.NotImplementedException, duckdb.CatalogException):
        conn.create_function(
            "__hati_udf_file_bytes",
            _file_bytes,
            [sqltypes.VARCHAR],
            sqltypes.BIGINT,
            side_effects=True,  # the file grows: never folded
        )
