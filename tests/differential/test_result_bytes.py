"""Result rows (text and binary) and COPY TO STDOUT (text, CSV, binary) byte for byte
against PostgreSQL 15, over more rows than one Arrow batch.

The same 20,000 generated rows are on both servers: NULLs in every column, integers of
each width at their extremes, decimals of scales 0, 2, 6 and 10, floats with infinities,
NaN and -0, booleans, dates, timestamps with and without time zone, text with tabs,
newlines, backslashes, quotes, commas and non-ASCII characters, jsonb. Result cells are
compared as the raw bytes the server sent (libpq's PGresult, before any parsing), so a
difference a driver would hide (a trailing zero, a NaN's bits, a jsonb version byte)
fails too. The Arrow-encoded columns and the per-value ones (bytea, uuid, interval,
arrays, wide decimals) are read in separate queries, so both paths are covered.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

ROWS = 20_000  # more than arrow_results.BATCH_ROWS: several batches

# NULL on every 13th row (shifted per column), the value otherwise.
_COLUMNS = {
    "i2": ("smallint", "((g * 7919) % 65535 - 32767)::smallint"),
    "i4": ("integer", "((g::bigint * 104729) % 4294967295 - 2147483647)::integer"),
    "i8": (
        "bigint",
        "CASE WHEN g = 1 THEN 9223372036854775807 WHEN g = 2 THEN -9223372036854775807"
        " ELSE (g::bigint * 922337203685) * (1 - 2 * (g % 2)) END",
    ),
    "n0": ("numeric(10,0)", "((g * 7919) % 2000001 - 1000000)::numeric(10,0)"),
    "n2": ("numeric(15,2)", "(((g * 7919) % 2000001 - 1000000)::numeric(18,0) * 0.01)"),
    "n6": ("numeric(18,6)", "(((g * 104729) % 200000001 - 100000000)::numeric(18,0) * 0.000001)"),
    "n10": ("numeric(16,10)", "(((g * 104729) % 20000001 - 10000000)::numeric(18,0) * 0.0000000001)"),
    "f4": ("real", "CASE g % 11 WHEN 1 THEN 'Infinity'::real WHEN 2 THEN '-Infinity'::real"
           " WHEN 3 THEN 'NaN'::real WHEN 4 THEN '-0'::real ELSE (g::float8 / 7)::real END"),
    "f8": ("double precision", "CASE g % 11 WHEN 1 THEN 'Infinity'::float8"
           " WHEN 2 THEN '-Infinity'::float8 WHEN 3 THEN 'NaN'::float8"
           " WHEN 4 THEN '-0'::float8 ELSE g::float8 / 7 END"),
    "b": ("boolean", "g % 2 = 0"),
    "t": (
        "text",
        "CASE g % 7 WHEN 0 THEN E'tab\\there' WHEN 1 THEN E'new\\nline\\r'"
        " WHEN 2 THEN E'back\\\\slash' WHEN 3 THEN 'q\"uo,te;' || g"
        " WHEN 4 THEN 'üñí€😀 ' || g WHEN 5 THEN '' ELSE '\\N' END",
    ),
    "d": ("date", "DATE '2000-01-01' + ((g * 37) % 40000 - 20000)::integer"),
    "ts": ("timestamp", "TIMESTAMP '1990-01-01' + g * INTERVAL '100.001234 seconds'"),
    "tz": (
        "timestamptz",
        "(TIMESTAMP '1969-06-01' + g * INTERVAL '350.0005 seconds')::timestamptz",
    ),
    "j": ("jsonb", "('{\"k\": ' || g || ', \"s\": \"a b\"}')::jsonb"),
}  # fmt: skip
# Columns only the per-value encoders send.
_OTHER = {
    "ba": ("bytea", "('ab ' || g)::bytea"),
    "u": ("uuid", "('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid"),
    "iv": ("interval", "(g % 50) * INTERVAL '1 day' + g * INTERVAL '3723.5 seconds'"),
    "ai": ("integer[]", "ARRAY[g, -g]"),
    "nw": ("numeric(30,12)", "(g::numeric(30,0) * 0.000000000001)"),
}
ARROW_TEXT = ["i2", "i4", "i8", "n0", "n2", "n6", "n10", "b", "t", "d", "ts", "tz", "j"]
ARROW_BINARY = [*ARROW_TEXT, "f4", "f8"]
PER_VALUE = ["f4", "f8", "ba", "u", "iv", "ai", "nw", "t"]


def _setup() -> list[str]:
    columns = {**_COLUMNS, **_OTHER}
    decl = ", ".join(f"{name} {ty}" for name, (ty, _) in columns.items())
    values = ", ".join(
        f"CASE WHEN (g + {k}) % 13 = 0 THEN NULL ELSE {expr} END"
        for k, (_, expr) in enumerate(columns.values())
    )
    return [
        f"CREATE TABLE rb (id integer, {decl})",
        f"INSERT INTO rb SELECT g, {values} FROM generate_series(1, {ROWS}) AS s(g)",
    ]


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with pg_and_hatiproxy(tmp_path_factory.mktemp("resultbytes"), _setup()) as dsns:
        yield dsns


def _connect(dsn: str) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True, options="-c TimeZone=UTC -c DateStyle=ISO")


def _raw_cells(dsn: str, sql: str, binary: bool) -> list[list[bytes | None]]:
    """Every cell as the server sent it."""
    with _connect(dsn) as conn, conn.cursor(binary=binary) as cur:
        cur.execute(sql)  # type: ignore[arg-type]
        res = cur.pgresult
        assert res is not None
        return [[res.get_value(r, c) for c in range(res.nfields)] for r in range(res.ntuples)]


def _query(columns: list[str]) -> str:
    return f"SELECT id, {', '.join(columns)} FROM rb ORDER BY id"


@pytest.mark.parametrize(
    ("columns", "binary"),
    [(ARROW_TEXT, False), (ARROW_BINARY, True), (PER_VALUE, False), (PER_VALUE, True)],
    ids=["arrow-text", "arrow-binary", "per-value-text", "per-value-binary"],
)
def test_result_cells_are_postgres_bytes(
    sides: tuple[str, str], columns: list[str], binary: bool
) -> None:
    sql = _query(columns)
    pg, hati = (_raw_cells(dsn, sql, binary) for dsn in sides)
    assert len(hati) == len(pg) == ROWS
    for row_pg, row_hati in zip(pg, hati, strict=True):
        assert row_hati == row_pg, f"{sql}\nPostgreSQL: {row_pg}\nhatiproxy:  {row_hati}"


def _copy(dsn: str, sql: str) -> bytes:
    with _connect(dsn) as conn, conn.cursor() as cur, cur.copy(sql) as copy:  # type: ignore[arg-type]
        return b"".join(bytes(block) for block in copy)


@pytest.mark.parametrize("options", ["", "(FORMAT csv)", "(FORMAT binary)"])
@pytest.mark.parametrize(
    "columns", [ARROW_TEXT, ARROW_BINARY, PER_VALUE], ids=["arrow-text", "floats", "per-value"]
)
def test_copy_out_is_postgres_bytes(
    sides: tuple[str, str], columns: list[str], options: str
) -> None:
    sql = f"COPY ({_query(columns)}) TO STDOUT {options}"
    pg, hati = (_copy(dsn, sql) for dsn in sides)
    if hati != pg:  # the first line that differs, not 2 MB of bytes
        diff = (i for i, (a, b) in enumerate(zip(pg, hati, strict=False)) if a != b)
        at = next(diff, min(len(pg), len(hati)))
        pytest.fail(f"{sql}\nat byte {at}\nPostgreSQL: {pg[max(at - 200, 0) : at + 200]!r}"
                    f"\nhatiproxy:  {hati[max(at - 200, 0) : at + 200]!r}")  # fmt: skip
