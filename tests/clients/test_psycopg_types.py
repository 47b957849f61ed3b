"""psycopg 3: values and types round-trip exactly, in text and binary, simple and extended."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

UTC = dt.UTC

# (SQL type, Python value, expected result OID)
ROUND_TRIP = [
    ("smallint", 12345, 21),
    ("integer", -2147483648, 23),
    ("bigint", 2**62 + 7, 20),
    ("double precision", 3.141592653589793, 701),
    ("real", 1.5, 700),
    ("numeric(12,4)", Decimal("-12345678.1234"), 1700),
    ("text", "héllo wörld ✓ 'quoted' \\ back", 25),
    ("bytea", b"\x00\x01\xfe\xff binary", 17),
    ("boolean", True, 16),
    ("date", dt.date(2024, 2, 29), 1082),
    ("time", dt.time(23, 59, 58, 123456), 1083),
    ("timestamp", dt.datetime(1999, 12, 31, 23, 59, 59, 999999), 1114),
    ("timestamptz", dt.datetime(2024, 7, 1, 12, 30, 15, 250000, tzinfo=UTC), 1184),
    ("interval", dt.timedelta(days=3, seconds=3723, microseconds=5), 1186),
    ("uuid", uuid.UUID("12345678-1234-5678-1234-567812345678"), 2950),
    ("integer[]", [1, 2, None, 4], 1007),
    ("text[]", ["a", "b c", "{", '"q"'], 1009),
    ("double precision[]", [1.25, -2.5], 1022),
]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
@pytest.mark.parametrize("prepare", [False, True], ids=["unprepared", "prepared"])
@pytest.mark.parametrize("sqltype,value,oid", ROUND_TRIP, ids=[r[0] for r in ROUND_TRIP])
def test_parameter_round_trip(conn, binary, prepare, sqltype, value, oid) -> None:
    cur = conn.cursor(binary=binary)
    cur.execute(f"SELECT %s::{sqltype} AS v", (value,), prepare=prepare)
    assert cur.description[0].type_code == oid
    got = cur.fetchone()[0]
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_literal_types(conn, binary) -> None:
    cur = conn.cursor(binary=binary)
    cur.execute(
        """SELECT 42::int4, 42::int8, 1.5::float4, 2.25::float8, 12.34::numeric(10,2),
                  'x'::varchar, 'ab'::bytea, DATE '2020-01-02', TIME '01:02:03',
                  TIMESTAMP '2020-01-02 03:04:05.5', TIMESTAMPTZ '2020-01-02 03:04:05+00',
                  INTERVAL '1 day 2 hours', '00000000-0000-0000-0000-000000000001'::uuid,
                  '{"a": [1, 2]}'::json, '{"b": null}'::jsonb, [1, 2, 3]::INTEGER[],
                  NULL::integer, true"""
    )
    row = cur.fetchone()
    assert row == (
        42,
        42,
        1.5,
        2.25,
        Decimal("12.34"),
        "x",
        b"ab",
        dt.date(2020, 1, 2),
        dt.time(1, 2, 3),
        dt.datetime(2020, 1, 2, 3, 4, 5, 500000),
        dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC),
        dt.timedelta(days=1, hours=2),
        uuid.UUID(int=1),
        {"a": [1, 2]},
        {"b": None},
        [1, 2, 3],
        None,
        True,
    )
    oids = [d.type_code for d in cur.description]
    assert oids[5] == 1043  # a cast to varchar: varchar, as PostgreSQL (cast_types.py)
    assert oids[:5] + oids[6:13] == [23, 20, 700, 701, 1700, 17, 1082, 1083, 1114, 1184, 1186, 2950]
    assert oids[13] in (114, 3802) and oids[15] == 1007 and oids[17] == 16


VECTOR_OID = 16400  # pgvector's vector in our pg_type


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_float_vector_column_arrives_as_pgvector_vector(conn, binary, table_name) -> None:
    """FLOAT[n] (vector(n)) columns are pgvector's vector, as PostgreSQL with pgvector
    sends them: without an adapter psycopg gives the text '[...]' (binary: the raw
    vector_send bytes); with pgvector.psycopg.register_vector, numpy float32 arrays."""
    import numpy as np
    from pgvector.psycopg import register_vector

    conn.execute(f"CREATE TABLE {table_name} (id int, emb FLOAT[3], l FLOAT[])")
    conn.execute(f"INSERT INTO {table_name} VALUES (1, [0.5, -1.25, 3.0], [0.5, 2])")
    cur = conn.cursor(binary=binary)
    cur.execute(f"SELECT emb, l FROM {table_name}")
    assert [d.type_code for d in cur.description] == [VECTOR_OID, 1021]  # a list stays float4[]
    emb, lst = cur.fetchone()
    if binary:  # vector_send: int16 dim, int16 unused, float4s, big-endian
        assert emb == b"\x00\x03\x00\x00" + np.array([0.5, -1.25, 3.0], ">f4").tobytes()
    else:
        assert emb == "[0.5,-1.25,3]"
    assert lst == [0.5, 2.0]
    register_vector(conn)
    cur = conn.cursor(binary=binary)
    got = cur.execute(f"SELECT emb FROM {table_name}").fetchone()[0]
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    assert got.tolist() == [0.5, -1.25, 3.0]
    # register_vector binds numpy arrays as vector (binary vector_send): they round-trip.
    vec = np.array([1e-8, -3.4e38, 0.1], dtype=np.float32)
    cur.execute(f"INSERT INTO {table_name} (id, emb) VALUES (2, %s)", (vec,))
    back = cur.execute(f"SELECT emb FROM {table_name} WHERE emb = %s", (vec,)).fetchone()[0]
    assert back.tobytes() == vec.tobytes()
    conn.execute(f"DROP TABLE {table_name}")


def _vector_text(values: list[float]) -> str:
    return "[" + ",".join(f"{v:g}" for v in values) + "]"


# pgvector's text form, as langchain-postgres and pgvector-python bind embeddings.
PGVECTOR_TEXT = [
    ("[1,2,3]", [1.0, 2.0, 3.0]),
    ("[1.0, 0.0, 0.5]", [1.0, 0.0, 0.5]),
    (" [-0.25,1e-1, 2E2 ] ", [-0.25, 0.1, 200.0]),
]


@pytest.mark.parametrize("prepare", [False, True], ids=["unprepared", "prepared"])
@pytest.mark.parametrize("column", ["vector(3)", "FLOAT[3]"])
def test_pgvector_text_parameters_into_vector_column(conn, prepare, column, table_name) -> None:
    conn.execute(f"CREATE TABLE {table_name} (id int, e {column})")
    n = 0
    for placeholder in ("%s", "%s::vector", "%s::vector(3)", "CAST(%s AS vector)"):
        for text, _ in PGVECTOR_TEXT:
            n += 1
            conn.execute(
                f"INSERT INTO {table_name} VALUES (%s, {placeholder})", (n, text), prepare=prepare
            )
    got = conn.execute(f"SELECT e FROM {table_name} ORDER BY id").fetchall()
    # vector columns come back in pgvector's text form, each float4 at its shortest
    assert [r[0] for r in got] == [_vector_text(v) for _, v in PGVECTOR_TEXT] * 4
    # The same text as a literal, in the simple query protocol, stores the same values.
    conn.execute(
        f"INSERT INTO {table_name} VALUES (100, '[1.0, 0.0, 0.5]'), "
        f"(101, '[1,2,3]'::vector), (102, CAST('[1,2,3]' AS vector(3)))"
    )
    assert conn.execute(
        f"SELECT count(*) FROM {table_name} a JOIN {table_name} b ON a.e = b.e "
        "WHERE a.id >= 100 AND b.id < 100"
    ).fetchone() == (4 + 4 + 4,)  # row 100 matches 4 rows; 101 and 102 match 4 each
    # Updates and filters bind the text form too; a bad element is 22P02, as in PostgreSQL.
    conn.execute(f"UPDATE {table_name} SET e = %s WHERE e = %s::vector", ("[9,9,9]", "[1,2,3]"))
    assert conn.execute(
        f"SELECT count(*) FROM {table_name} WHERE e = %s", ("[9, 9, 9]",)
    ).fetchone() == (6,)
    with pytest.raises(psycopg.errors.InvalidTextRepresentation):
        conn.execute(f"INSERT INTO {table_name} VALUES (0, %s)", ("[1,x,3]",))
    conn.execute(f"DROP TABLE {table_name}")


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_json_parameters(conn, binary) -> None:
    cur = conn.cursor(binary=binary)
    doc = {"k": [1, "two", None, {"n": 1.5}], "ü": True}
    cur.execute("SELECT %s::json, %s::jsonb", (Json(doc), Jsonb(doc)))
    assert cur.fetchone() == (doc, doc)


def test_table_round_trip_with_inferred_params(conn, table_name) -> None:
    conn.execute(
        f"""CREATE TABLE {table_name} (id bigint PRIMARY KEY, name text, price numeric(10,2),
            born date, seen timestamptz, tags text[], data bytea, ok boolean, u uuid)"""
    )
    row = (
        7,
        "o'neil",
        Decimal("19.99"),
        dt.date(1970, 1, 1),
        dt.datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC),
        ["x", "y"],
        b"\x00z",
        False,
        uuid.uuid4(),
    )
    with conn.cursor(binary=True) as cur:
        cur.execute(f"INSERT INTO {table_name} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", row)
        assert cur.rowcount == 1
        assert cur.statusmessage == "INSERT 0 1"
        cur.execute(f"SELECT * FROM {table_name} WHERE id = %s", (7,))
        assert cur.fetchone() == row
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM {table_name} WHERE name = %s", ("o'neil",))
        assert cur.fetchone() == row
    conn.execute(f"DROP TABLE {table_name}")


def test_null_and_empty_values(conn) -> None:
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        cur.execute("SELECT %s::text, ''::text, %s::int, ARRAY[]::int[]", (None, None))
        assert cur.fetchone() == (None, "", None, [])


def test_special_floats(conn) -> None:
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        cur.execute("SELECT 'Infinity'::float8, '-Infinity'::float8, 'NaN'::float8")
        inf, ninf, nan = cur.fetchone()
        assert inf == float("inf") and ninf == float("-inf") and nan != nan


def test_bytea_hex_literal(conn) -> None:
    """Postgres reads '\\x0a0b'::bytea as hex (two bytes), not as an escape plus text."""
    assert conn.execute("SELECT '\\x0a0b'::bytea").fetchone()[0] == b"\n\x0b"


def test_binary_int4_then_float4_arrays_of_same_length(conn) -> None:
    """Binary int4[] and float4[] of equal length must not share a packing layout."""
    cur = conn.cursor(binary=True)
    assert cur.execute("SELECT [1, 2, 3]::INTEGER[]").fetchone()[0] == [1, 2, 3]
    assert cur.execute("SELECT [0.5, 1.5, 2.5]::FLOAT[]").fetchone()[0] == [0.5, 1.5, 2.5]
