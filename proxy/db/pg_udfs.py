"""PostgreSQL's sha224 / sha384 / sha512 (bytea -> bytea) as Python UDFs.

DuckDB has md5, sha1 and sha256 only (sqlglot writes every sha2 variant as SHA256, a
silently different hash); the transpiler (transpiler/pg_functions_more.py) and pgcrypto's
digest() (80_hati_functions.sql) call these `__hati_` names.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable

import duckdb
from duckdb import sqltypes

from proxy.db.duckdb_errors import UdfError

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


_ESCAPE = re.compile(
    r"\\(?:(\\)|([0-9A-Fa-f]{4})|\+([0-9A-Fa-f]{6})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))"
)


def _code_point(hexdigits: str) -> int:
    cp = int(hexdigits, 16)
    if cp > 0x10FFFF or cp == 0:
        raise UdfError("22023", "invalid Unicode code point: " + format(cp, "04X"))
    return cp


def unistr(text: str) -> str:
    """\\ , \\XXXX, \\+XXXXXX, \\uXXXX, \\UXXXXXXXX; a surrogate pair makes one character."""
    out: list[str] = []
    at = 0
    pending: int | None = None  # a high surrogate waiting for its low half
    while at < len(text):
        ch = text[at]
        if ch != "\\":
            if pending is not None:
                raise UdfError("42601", "invalid Unicode surrogate pair")
            out.append(ch)
            at += 1
            continue
        m = _ESCAPE.match(text, at)
        if m is None:
            raise UdfError("42601", "invalid Unicode escape")
        at = m.end()
        if m[1]:
            if pending is not None:
                raise UdfError("42601", "invalid Unicode surrogate pair")
            out.append("\\")
            continue
        cp = _code_point(next(g for g in m.groups()[1:] if g))
        if 0xD800 <= cp <= 0xDBFF:
            if pending is not None:
                raise UdfError("42601", "invalid Unicode surrogate pair")
            pending = cp
        elif 0xDC00 <= cp <= 0xDFFF:
            if pending is None:
                raise UdfError("42601", "invalid Unicode surrogate pair")
            out.append(chr(0x10000 + ((pending - 0xD800) << 10) + (cp - 0xDC00)))
            pending = None
        else:
            if pending is not None:
                raise UdfError("42601", "invalid Unicode surrogate pair")
            out.append(chr(cp))
    if pending is not None:
        raise UdfError("42601", "invalid Unicode surrogate pair")
    return "".join(out)


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
    with contextlib.suppress(duckdb.NotImplementedException, duckdb.CatalogException):
        conn.create_function(
            "__hati_udf_unistr", unistr, [sqltypes.VARCHAR], sqltypes.VARCHAR, side_effects=False
        )
