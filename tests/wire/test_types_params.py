"""Parameter decoders: property round trips and hostile input (no PG server needed)."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.wire.oids import BY_OID, ParamDecodeError
from proxy.wire.rows import encode_data_rows
from proxy.wire.types import (
    duckdb_type_for_oid,
    oid_for_duckdb_type_name,
    param_decoder,
    pg_type_for,
    result_encoder,
)

ALL_OIDS = sorted(BY_OID)


def roundtrip(dtype: str, value: object) -> None:
    oid = pg_type_for(dtype).oid
    for fmt in (0, 1):
        enc = result_encoder(dtype, fmt)(value)
        got = param_decoder(oid, fmt)(enc)
        assert result_encoder(dtype, fmt)(got) == enc, (dtype, fmt, value, got)


@given(st.integers(-(2**63), 2**63 - 1))
def test_int8_roundtrip(v: int) -> None:
    roundtrip("BIGINT", v)
    assert param_decoder(20, 1)(result_encoder("BIGINT", 1)(v)) == v
    assert param_decoder(20, 0)(result_encoder("BIGINT", 0)(v)) == v


@given(st.integers(-(2**127), 2**127 - 1))
def test_hugeint_numeric_roundtrip(v: int) -> None:
    for fmt in (0, 1):
        assert param_decoder(1700, fmt)(result_encoder("HUGEINT", fmt)(v)) == v


@given(st.floats(allow_nan=False))
def test_float8_roundtrip(v: float) -> None:
    for fmt in (0, 1):
        assert param_decoder(701, fmt)(result_encoder("DOUBLE", fmt)(v)) == v


@given(st.floats(width=32, allow_nan=False))
def test_float4_roundtrip(v: float) -> None:
    for fmt in (0, 1):
        assert param_decoder(700, fmt)(result_encoder("FLOAT", fmt)(v)) == v


@given(
    st.decimals(
        allow_nan=False, allow_infinity=False, places=4, min_value=-(10**30), max_value=10**30
    )
)
def test_numeric_roundtrip(v: Decimal) -> None:
    for fmt in (0, 1):
        got = param_decoder(1700, fmt)(result_encoder("DECIMAL(38,4)", fmt)(v))
        assert got == v and got.as_tuple().exponent == v.as_tuple().exponent


@given(st.text())
def test_text_roundtrip(v: str) -> None:
    v = v.replace("\x00", "")
    for fmt in (0, 1):
        assert param_decoder(25, fmt)(result_encoder("VARCHAR", fmt)(v)) == v


@given(st.lists(st.one_of(st.none(), st.text().map(lambda s: s.replace("\x00", "")))))
def test_text_array_roundtrip(v: list) -> None:
    for fmt in (0, 1):
        assert param_decoder(1009, fmt)(result_encoder("VARCHAR[]", fmt)(v)) == v


@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)), min_size=3, max_size=3),
        min_size=1,
    )
)
def test_2d_int_array_roundtrip(v: list) -> None:
    for fmt in (0, 1):
        assert param_decoder(1007, fmt)(result_encoder("INTEGER[][]", fmt)(v)) == v


@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=400))
def test_float4_list_roundtrip(v: list) -> None:
    assert pg_type_for("FLOAT[]").oid == 1021  # a variable-length list stays float4[]
    for fmt in (0, 1):
        assert param_decoder(1021, fmt)(result_encoder("FLOAT[]", fmt)(tuple(v))) == v


@given(
    st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=400)
)
def test_float4_vector_roundtrip(v: list) -> None:
    """FLOAT[n] is pgvector's vector: its text and vector_send output read back (a binary
    vector parameter decodes to the text DuckDB casts) as the same float4 values."""
    dtype = f"FLOAT[{len(v)}]"
    assert (pg_type_for(dtype).oid, pg_type_for(dtype).typmod) == (16400, len(v))
    text = result_encoder(dtype, 0)(v).decode()  # shortest digits that read back as float4
    assert np.array(text[1:-1].split(","), dtype=np.float32).tolist() == v
    back = param_decoder(16400, 1)(result_encoder(dtype, 1)(v))
    assert [float(x) for x in back[1:-1].split(",")] == v  # type: ignore[index]


@given(st.binary())
def test_bytea_roundtrip(v: bytes) -> None:
    for fmt in (0, 1):
        assert param_decoder(17, fmt)(result_encoder("BLOB", fmt)(v)) == v


@given(st.datetimes(timezones=st.just(dt.UTC)))
def test_timestamptz_roundtrip(v: dt.datetime) -> None:
    for fmt in (0, 1):
        assert param_decoder(1184, fmt)(result_encoder("TIMESTAMP WITH TIME ZONE", fmt)(v)) == v


@given(st.dates())
def test_date_roundtrip(v: dt.date) -> None:
    for fmt in (0, 1):
        assert param_decoder(1082, fmt)(result_encoder("DATE", fmt)(v)) == v


@given(st.integers(-(10**6), 10**6), st.integers(-(10**5), 10**5), st.integers(-(10**14), 10**14))
def test_interval_text_roundtrip(months: int, days: int, us: int) -> None:
    from proxy.wire.temporal import format_pg_interval, parse_interval_text

    assert parse_interval_text(format_pg_interval(months, days, us)) == (months, days, us)


# ------------------------------------------------------------ hostile input


@settings(max_examples=300)
@given(st.sampled_from(ALL_OIDS), st.binary(max_size=64))
def test_binary_garbage_raises_only_param_errors(oid: int, data: bytes) -> None:
    try:
        param_decoder(oid, 1)(data)
    except ParamDecodeError as e:
        assert e.sqlstate in {
            "08P01",
            "22P03",
            "22021",
            "22P02",
            "42804",
            "54000",
            "22008",
            "22009",
        }


@settings(max_examples=300)
@given(st.sampled_from(ALL_OIDS), st.binary(max_size=64))
def test_text_garbage_raises_only_param_errors(oid: int, data: bytes) -> None:
    try:
        param_decoder(oid, 0)(data)
    except ParamDecodeError as e:
        assert e.sqlstate in {"22P02", "22003", "22021", "22007", "22008", "54000"}


@pytest.mark.parametrize(
    ("oid", "fmt", "data", "sqlstate", "needle"),
    [
        (23, 0, b"abc", "22P02", 'type integer: "abc"'),
        (21, 0, b"40000", "22003", "out of range for type smallint"),
        (20, 0, b"1_000", "22P02", "bigint"),
        (16, 0, b"maybe", "22P02", "boolean"),
        (701, 0, b"1e400", "22003", "double precision"),
        (1700, 0, b"1.2.3", "22P02", "numeric"),
        (2950, 0, b"not-a-uuid", "22P02", "uuid"),
        (114, 0, b"{bad json", "22P02", "json"),
        (1082, 0, b"2024-13-01", "22007", "date"),
        (1007, 0, b"{1,2", "22P02", "malformed array literal"),
        (1007, 0, b"{1,x}", "22P02", "integer"),
        (25, 0, b"\xff\xfe", "22021", "UTF8"),
        (23, 1, b"\x00\x01", "08P01", "integer"),
        (23, 1, b"\x00\x00\x00\x01\x00", "22P03", "integer"),
        (1700, 1, b"\x00\x01\x00\x00\x00\x00\x00\x00\x27\x10", "22P03", "digit"),
        (1007, 1, struct.pack(">iiI", 1, 0, 25) + struct.pack(">ii", 1, 1), "42804", "element"),
        (1007, 1, struct.pack(">iiI", 1, 0, 23) + struct.pack(">ii", 2**30, 1), "08P01", ""),
        (1007, 1, struct.pack(">iiI", 7, 0, 23), "54000", "dimensions"),
        (3802, 1, b"\x02{}", "22P03", "jsonb version"),
        (2950, 1, b"\x00" * 15, "08P01", "uuid"),
    ],
)
def test_specific_errors(oid: int, fmt: int, data: bytes, sqlstate: str, needle: str) -> None:
    with pytest.raises(ParamDecodeError) as ei:
        param_decoder(oid, fmt)(data)
    assert ei.value.sqlstate == sqlstate
    assert needle in str(ei.value)


def test_text_inputs_postgres_accepts() -> None:
    dec = param_decoder
    assert dec(16, 0)(b" YES ") is True and dec(16, 0)(b"of") is False
    assert dec(23, 0)(b"  -42 ") == -42
    assert dec(701, 0)(b"-Infinity") == float("-inf")
    assert dec(1700, 0)(b" 1.50 ") == Decimal("1.50")
    assert dec(17, 0)(b"\\x00ff") == b"\x00\xff" and dec(17, 0)(b"a\\\\b\\001") == b"a\\b\x01"
    assert dec(1184, 0, "Asia/Kolkata")(b"2024-01-01 12:00:00") == dt.datetime(
        2024, 1, 1, 6, 30, tzinfo=dt.UTC
    )
    assert dec(1114, 0)(b"2024-01-01 12:00:00+05") == dt.datetime(2024, 1, 1, 12)
    assert dec(1082, 0)(b"infinity") == "infinity"
    assert dec(1009, 0)(b'{"a\\"b",NULL,"NULL", c d }') == ['a"b', None, "NULL", "c d"]
    assert dec(1007, 0)(b"[0:1]={1,2}") == [1, 2]
    assert (
        dec(1186, 0)(b"1 year 2 mons 3 days 04:05:06")
        == "14 months 3 days 14706000000 microseconds"
    )
    assert dec(1186, 0)(b"3 days 04:05:06") == dt.timedelta(days=3, seconds=14706)
    assert dec(0, 0)(b"anything") == "anything"


@pytest.mark.parametrize(
    "text, expected",
    [
        (b"[1,2,3]", [1.0, 2.0, 3.0]),
        (b"[1.0, 0.0, 0.5]", [1.0, 0.0, 0.5]),
        (b"  [ -0.21 ,1e-3, 2E2 ,+4.5e+1 ]\n", [-0.21, 1e-3, 200.0, 45.0]),
        (b"[.5]", [0.5]),
        (b"[]", []),
        (b"{1,2,3}", [1.0, 2.0, 3.0]),
        (b"[1:3]={1,2,3}", [1.0, 2.0, 3.0]),
        (b"[0:0]={7}", [7.0]),
    ],
)
def test_float_arrays_take_pgvector_text(text: bytes, expected: list) -> None:
    # langchain-postgres and psycopg bind embeddings as pgvector text '[...]'.
    assert param_decoder(1022, 0)(text) == expected
    got = param_decoder(1021, 0)(text)
    assert got == [struct.unpack(">f", struct.pack(">f", v))[0] for v in expected]


@pytest.mark.parametrize(
    "oid, text, needle",
    [
        (1021, b"[1,2", "float4[]"),
        (1021, b"[1,,2]", "float4[]"),
        (1021, b"[1,2,]", "float4[]"),
        (1021, b"[[1,2],[3,4]]", "float4[]"),
        (1021, b'["1",2]', "float4[]"),
        (1021, b"[1,NULL]", "real"),
        (1021, b"[1,abc]", 'real: "abc"'),
        (1022, b"[1 2]", "double precision"),
        (1021, b"[1,2]x", "float4[]"),
        (1007, b"[1,2,3]", "int4[]"),  # only float arrays (vectors) take the bracket form
        (1009, b"[a,b]", "text[]"),
    ],
)
def test_pgvector_text_errors(oid: int, text: bytes, needle: str) -> None:
    with pytest.raises(ParamDecodeError) as ei:
        param_decoder(oid, 0)(text)
    assert ei.value.sqlstate == "22P02"
    assert needle in str(ei.value)


def test_type_name_mapping() -> None:
    assert pg_type_for("DECIMAL(10,2)").typmod == ((10 << 16) | 2) + 4
    assert pg_type_for("STRUCT(a INTEGER)").oid == 25
    assert pg_type_for("STRUCT(a INTEGER)[]").oid == 25
    assert pg_type_for("MAP(VARCHAR, INTEGER)").oid == 25
    assert pg_type_for("ENUM('a[1]', 'b')").oid == 25
    assert pg_type_for('"NULL"').oid == 25 and pg_type_for("NULL").oid == 25
    assert pg_type_for("TIMESTAMP_NS").oid == 1114
    assert pg_type_for("TIMESTAMP WITH TIME ZONE[]").oid == 1185
    assert duckdb_type_for_oid(23) == "INTEGER" and duckdb_type_for_oid(1021) == "FLOAT[]"
    assert duckdb_type_for_oid(3802) == "JSON" and duckdb_type_for_oid(1700) is None
    assert oid_for_duckdb_type_name("VARCHAR") == 25 and oid_for_duckdb_type_name("UUID") == 2950


def test_encode_data_rows_layout() -> None:
    encs = [result_encoder("INTEGER", 0), result_encoder("VARCHAR", 1)]
    out = encode_data_rows([(1, "ab"), (None, "")], encs)
    assert out == (
        b"D"
        + struct.pack(">ih", 4 + 2 + 4 + 1 + 4 + 2, 2)
        + struct.pack(">i", 1)
        + b"1"
        + struct.pack(">i", 2)
        + b"ab"
        + b"D"
        + struct.pack(">ih", 4 + 2 + 4 + 4, 2)
        + b"\xff\xff\xff\xff"
        + struct.pack(">i", 0)
    )
    single = encode_data_rows([(7,)], [result_encoder("BIGINT", 1)])
    assert single == b"D" + struct.pack(">ihiq", 18, 1, 8, 7)
