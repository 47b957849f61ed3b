"""COPY in both directions, text, CSV and binary, for every common column type, byte for
byte against PostgreSQL 15.

The same table is filled on both servers. COPY TO STDOUT must give PostgreSQL's bytes;
then PostgreSQL's bytes are copied back FROM STDIN into an empty table of the same shape
on hatiproxy, and copying that out again must give the same bytes: what pg_dump, psql's
\\copy and drivers' bulk loaders send is read back unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

COLUMNS = {
    "i2": "smallint",
    "i4": "integer",
    "i8": "bigint",
    "num": "numeric(12,3)",
    "f4": "real",
    "f8": "double precision",
    "b": "boolean",
    "t": "text",
    "vc": "varchar(12)",
    "ba": "bytea",
    "d": "date",
    "tm": "time",
    "ts": "timestamp",
    "tz": "timestamptz",
    "iv": "interval",
    "u": "uuid",
    "j": "json",
    "jb": "jsonb",
    "ai": "integer[]",
    "at": "text[]",
}
ROWS = [
    "(1, 1, -32768, 9223372036854775807, -12.5, 1.5, 0.1, true, E'tab\\there',"
    " 'x,y', '\\x00ff10'::bytea, '2024-02-29', '23:59:59.5', '2024-01-01 12:00:00.25',"
    " '2024-01-01 00:00:00+00', '1 day 02:03:04', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
    " '{\"a\": [1, 2]}', '{\"b\": {\"c\": null}}', ARRAY[1,2,3], ARRAY['a b','c',NULL])",
    "(2, 2, 0, 0, 0, 0, -2.5e-5, false, '', '', '\\x'::bytea, '0044-03-15', '00:00:00',"
    " '1999-12-31 23:59:59', '2038-01-19 03:14:08+00', '-3 hours',"
    " '00000000-0000-0000-0000-000000000000', '[]', '{}', ARRAY[]::integer[], ARRAY[]::text[])",
    "(3, 3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL)",
]
FORMATS = ["", "(FORMAT csv)", "(FORMAT binary)"]
# A table column declared json is jsonb on hatiproxy (DuckDB has one JSON type; see
# docs/compatibility.md): in binary its values carry jsonb's version byte.
CASES = [(c, f) for f in FORMATS for c in COLUMNS if (c, f) != ("j", "(FORMAT binary)")]


def _create(name: str) -> str:
    cols = ", ".join(f"{c} {t}" for c, t in COLUMNS.items())
    return f"CREATE TABLE {name} (id integer, {cols})"


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    setup = [_create("ct"), f"INSERT INTO ct VALUES {', '.join(ROWS)}"]
    with pg_and_hatiproxy(tmp_path_factory.mktemp("copytypes"), setup) as dsns:
        yield dsns


def _connect(dsn: str) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True, options="-c TimeZone=UTC -c DateStyle=ISO")


def _copy_out(dsn: str, sql: str) -> bytes:
    with _connect(dsn) as conn, conn.cursor() as cur, cur.copy(sql) as copy:  # type: ignore[arg-type]
        return b"".join(bytes(block) for block in copy)


def _copy_in(dsn: str, sql: str, data: bytes) -> None:
    with _connect(dsn) as conn, conn.cursor() as cur, cur.copy(sql) as copy:  # type: ignore[arg-type]
        copy.write(data)


@pytest.mark.parametrize(("column", "options"), CASES)
def test_copy_out_matches_postgres(sides: tuple[str, str], column: str, options: str) -> None:
    sql = f"COPY (SELECT id, {column} FROM ct ORDER BY id) TO STDOUT {options}"
    pg, hati = (_copy_out(dsn, sql) for dsn in sides)
    assert hati == pg, f"{sql}\nPostgreSQL: {pg[:400]!r}\nhatiproxy:  {hati[:400]!r}"


@pytest.mark.parametrize(("column", "options"), CASES)
def test_postgres_copy_data_reads_back_unchanged(
    sides: tuple[str, str], column: str, options: str
) -> None:
    pg, hati = sides
    out = f"COPY (SELECT id, {column} FROM ct ORDER BY id) TO STDOUT {options}"
    data = _copy_out(pg, out)
    table = f"ct_in_{column}_{len(options)}"
    with _connect(hati) as conn:
        conn.execute(f"CREATE TABLE {table} (id integer, {column} {COLUMNS[column]})")  # type: ignore[arg-type]
    _copy_in(hati, f"COPY {table} (id, {column}) FROM STDIN {options}", data)
    back = _copy_out(
        hati, f"COPY (SELECT id, {column} FROM {table} ORDER BY id) TO STDOUT {options}"
    )
    assert back == data, (
        f"{column} {options}\nPostgreSQL: {data[:400]!r}\nback:       {back[:400]!r}"
    )


def test_json_column_is_jsonb_in_binary_copy_and_reads_postgres_json_back(
    sides: tuple[str, str],
) -> None:
    pg, hati = sides
    sql = "COPY (SELECT id, j FROM ct ORDER BY id) TO STDOUT (FORMAT binary)"
    theirs, ours = _copy_out(pg, sql), _copy_out(hati, sql)
    jsonb = [None if v is None else b"\x01" + v for v in _binary_column(theirs, 1)]
    assert _binary_column(ours, 1) == jsonb
    with _connect(hati) as conn:
        conn.execute("CREATE TABLE ct_json_in (id integer, j json)")
    _copy_in(hati, "COPY ct_json_in FROM STDIN (FORMAT binary)", theirs)  # json: no version byte
    with _connect(hati) as conn:
        rows = conn.execute("SELECT id, j::text FROM ct_json_in ORDER BY id").fetchall()
    assert rows == [(1, '{"a": [1, 2]}'), (2, "[]"), (3, None)]


def _binary_column(data: bytes, index: int) -> list[bytes | None]:
    """The values of one column of a binary COPY stream."""
    out, pos = [], 19
    while (n := int.from_bytes(data[pos : pos + 2], "big", signed=True)) != -1:
        pos += 2
        for i in range(n):
            size = int.from_bytes(data[pos : pos + 4], "big", signed=True)
            pos += 4
            value = None if size == -1 else data[pos : pos + size]
            pos += max(size, 0)
            if i == index:
                out.append(value)
    return out
