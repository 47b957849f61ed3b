"""Differential tests: our encoders vs the bytes a real PostgreSQL 15 sends.

One throwaway PG 15 cluster per session (initdb in a temp dir, run as user
`postgres`).  Each case is a PG literal and the DuckDB literal for the same value;
the DuckDB value is fetched exactly as the engine would (applying
``lossless_cast``) and encoded in text and binary, then compared with PG's raw
bytes for the same literal, fetched through psycopg 3 with pass-through loaders.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator

import duckdb
import psycopg
import pytest
from psycopg.adapt import Loader
from psycopg.pq import Format

from proxy.wire.types import (
    duckdb_type_for_oid,
    lossless_cast,
    param_decoder,
    pg_type_for,
    result_encoder,
)

PGBIN = "/usr/lib/postgresql/15/bin"

# (PG literal, DuckDB literal or None when identical).  Add rows freely.
CASES: list[tuple[str, str | None]] = [
    ("true", None),
    ("false", None),
    ("(-32768)::int2", "(-32768)::SMALLINT"),
    ("2147483647::int4", "2147483647::INTEGER"),
    ("(-9223372036854775808)::int8", "(-9223372036854775808)::BIGINT"),
    ("200::int2", "200::UTINYINT"),
    ("60000::int4", "60000::USMALLINT"),
    ("4000000000::int8", "4000000000::UINTEGER"),
    ("18446744073709551615::numeric", "18446744073709551615::UBIGINT"),
    (
        "(-170141183460469231731687303715884105728)::numeric",
        "(-170141183460469231731687303715884105728)::HUGEINT",
    ),
    ("0.1::float4", "0.1::FLOAT"),
    ("1e6::float4", "1e6::FLOAT"),
    ("1234567::float4", "1234567::FLOAT"),
    ("3.4028235e38::float4", "3.4028235e38::FLOAT"),
    ("1e-45::float4", "1e-45::FLOAT"),
    ("'-0'::float4", "'-0'::FLOAT"),
    ("'NaN'::float4", "'NaN'::FLOAT"),
    ("'-Infinity'::float4", "'-Infinity'::FLOAT"),
    ("0.3333333::float4", "0.3333333::FLOAT"),
    ("0.1::float8", "0.1::DOUBLE"),
    ("1e15::float8", "1e15::DOUBLE"),
    ("123456789012345.6::float8", "123456789012345.6::DOUBLE"),
    ("1.2345678901234568e17::float8", "1.2345678901234568e17::DOUBLE"),
    ("5e-324::float8", "5e-324::DOUBLE"),
    ("'Infinity'::float8", "'Infinity'::DOUBLE"),
    ("'NaN'::float8", "'NaN'::DOUBLE"),
    ("(1/3.0)::float8", "(1/3.0)::DOUBLE"),
    ("1.5::numeric(10,2)", "1.5::DECIMAL(10,2)"),
    ("(-0.001)::numeric(10,3)", "(-0.001)::DECIMAL(10,3)"),
    ("0::numeric(10,2)", "0::DECIMAL(10,2)"),
    ("10000::numeric(10,0)", "10000::DECIMAL(10,0)"),
    (
        "123456789012345678901234.567891::numeric(38,6)",
        "123456789012345678901234.567891::DECIMAL(38,6)",
    ),
    ("0.00001234::numeric(18,8)", "0.00001234::DECIMAL(18,8)"),
    ("'héllo wörld'::text", "'héllo wörld'::VARCHAR"),
    ("''::text", "''::VARCHAR"),
    ("'\\x00ff41'::bytea", "'\\x00\\xFFA'::BLOB"),
    ("'2024-01-02'::date", "DATE '2024-01-02'"),
    ("'0044-03-15 BC'::date", "'0044-03-15 (BC)'::DATE"),
    ("'12345-06-07'::date", "'12345-06-07'::DATE"),
    ("'03:04:05.5'::time", "TIME '03:04:05.5'"),
    ("'00:00:00'::time", "TIME '00:00:00'"),
    ("'24:00:00'::time", "TIME '24:00:00'"),
    ("'03:04:05+05:30'::timetz", "TIMETZ '03:04:05+05:30'"),
    ("'23:59:59.999999-08'::timetz", "TIMETZ '23:59:59.999999-08'"),
    ("'2024-01-02 03:04:05.123456'::timestamp", "TIMESTAMP '2024-01-02 03:04:05.123456'"),
    ("'2024-01-02 03:04:05'::timestamp", "TIMESTAMP '2024-01-02 03:04:05'"),
    ("'2024-01-02 03:04:05.5'::timestamp", "TIMESTAMP_MS '2024-01-02 03:04:05.5'"),
    ("'0002-11-28 12:00:00 BC'::timestamp", "TIMESTAMP '0001-01-01 12:00:00' - INTERVAL 400 DAY"),
    ("'2024-01-02 03:04:05.5+00'::timestamptz", "TIMESTAMPTZ '2024-01-02 03:04:05.5+00'"),
    ("'2024-07-02 03:04:05+02'::timestamptz", "TIMESTAMPTZ '2024-07-02 03:04:05+02'"),
    ("'1900-01-01 12:00:00+00'::timestamptz", "TIMESTAMPTZ '1900-01-01 12:00:00+00'"),
    (
        "'0977-01-01 12:00:00.5+00 BC'::timestamptz",
        "TIMESTAMPTZ '2024-01-01 12:00:00.5+00' - INTERVAL 3000 YEAR",
    ),
    ("'1 year 2 months 3 days 4 hours'::interval", "INTERVAL '1 year 2 months 3 days 4 hours'"),
    (
        "'-1 year -2 mons +3 days -04:05:06.5'::interval",
        "INTERVAL '-1 year -2 months 3 days -04:05:06.5'",
    ),
    ("'1 day -1 hour'::interval", "INTERVAL '1 day -1 hour'"),
    ("'0'::interval", "INTERVAL '0 seconds'"),
    ("'100 hours 0.5 sec'::interval", "INTERVAL '100 hours 0.5 sec'"),
    ("'-1 mon'::interval", "INTERVAL '-1 month'"),
    ("'-1.5 sec'::interval", "INTERVAL '-1.5 sec'"),
    ("'-3 years'::interval", "INTERVAL '-3 years'"),
    (
        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID",
    ),
    ("'{\"a\":[1,2.5,null]}'::json", "'{\"a\":[1,2.5,null]}'::JSON"),
    ("ARRAY[1,NULL,3]::int4[]", "[1,NULL,3]::INTEGER[]"),
    ("ARRAY[]::int4[]", "[]::INTEGER[]"),
    ("ARRAY[1,2]::int8[]", "[1,2]::BIGINT[]"),
    ("ARRAY[1,2]::int2[]", "[1,2]::SMALLINT[]"),
    ("ARRAY[[1,2],[3,4]]::int4[]", "[[1,2],[3,4]]::INTEGER[][]"),
    ("ARRAY[0.1,1.5,-2e10]::float4[]", "[0.1,1.5,-2e10]::FLOAT[]"),
    ("ARRAY[0.1,NULL,'NaN']::float8[]", "[0.1::DOUBLE,NULL,'NaN'::DOUBLE]"),
    (
        "ARRAY['a b','','NULL','null','x\"y','a\\b','{',',','é',NULL]::text[]",
        "['a b','','NULL','null','x\"y','a\\b','{',',','é',NULL]::VARCHAR[]",
    ),
    ("ARRAY[true,false,NULL]", "[true,false,NULL]"),
    ("ARRAY[1.5,NULL]::numeric(10,2)[]", "[1.5,NULL]::DECIMAL(10,2)[]"),
    ("ARRAY['2024-01-02'::date]", "[DATE '2024-01-02']"),
    ("ARRAY['2024-01-02 03:04:05'::timestamp]", "[TIMESTAMP '2024-01-02 03:04:05']"),
    ("ARRAY['2024-01-02 03:04:05+00'::timestamptz]", "[TIMESTAMPTZ '2024-01-02 03:04:05+00']"),
    ("ARRAY['\\x00'::bytea]", "['\\x00'::BLOB]"),
    (
        "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]",
        "['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID]",
    ),
    ("ARRAY['{\"a\":1}'::json]", "['{\"a\":1}'::JSON]"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def pg() -> Iterator[str]:
    """A throwaway PostgreSQL 15 cluster; yields a conninfo string."""
    if not os.path.exists(f"{PGBIN}/initdb"):
        pytest.fail("PostgreSQL 15 is required at " + PGBIN)
    base = tempfile.mkdtemp(prefix="hati-pgtypes-")
    shutil.chown(base, "postgres")
    data, port = os.path.join(base, "data"), _free_port()
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run(
        as_pg + [f"{PGBIN}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {base} -c listen_addresses= -c fsync=off"
    subprocess.run(
        as_pg
        + [
            f"{PGBIN}/pg_ctl",
            "-D",
            data,
            "-o",
            opts,
            "-w",
            "-l",
            os.path.join(base, "log"),
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"host={base} port={port} user=postgres dbname=postgres"
    finally:
        subprocess.run(
            as_pg + [f"{PGBIN}/pg_ctl", "-D", data, "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)


class _RawText(Loader):
    def load(self, data):  # noqa: ANN001, ANN201
        return bytes(data)


class _RawBinary(Loader):
    format = Format.BINARY

    def load(self, data):  # noqa: ANN001, ANN201
        return bytes(data)


def pg_raw(conninfo: str, literals: list[str], tz: str = "UTC") -> list[tuple[int, bytes, bytes]]:
    """(type oid, text bytes, binary bytes) PG sends for each literal."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"SET TimeZone = '{tz}'")
        oids = [r[0] for r in conn.execute("SELECT oid::int FROM pg_type").fetchall()]
        for oid in oids:
            conn.adapters.register_loader(oid, _RawText)
            conn.adapters.register_loader(oid, _RawBinary)
        sql = "SELECT " + ", ".join(literals)
        cur = conn.cursor()
        cur.execute(sql)
        text = cur.fetchone()
        types = [d.type_code for d in cur.description]
        bcur = conn.cursor(binary=True)
        bcur.execute(sql)
        binary = bcur.fetchone()
    return list(zip(types, text, binary, strict=True))


def duck_values(literals: list[str], tz: str = "UTC") -> list[tuple[str, object]]:
    """(DuckDB type string, Python value) as the engine would fetch each literal."""
    con = duckdb.connect()
    con.execute(f"SET TimeZone = '{tz}'")
    out = []
    for lit in literals:
        cur = con.execute(f"SELECT {lit}")
        dtype = str(cur.description[0][1])
        cast = lossless_cast(dtype)
        if cast:
            cur = con.execute(f"SELECT ({lit})::{cast}")
        out.append((dtype, cur.fetchone()[0]))
    con.close()
    return out


@pytest.fixture(scope="module")
def pg_cases(pg: str) -> list[tuple[int, bytes, bytes]]:
    return pg_raw(pg, [c[0] for c in CASES])


@pytest.fixture(scope="module")
def duck_cases() -> list[tuple[str, object]]:
    return duck_values([c[1] or c[0] for c in CASES])


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[c[0][:50] for c in CASES])
def test_matches_postgres(idx: int, pg_cases, duck_cases) -> None:  # noqa: ANN001
    oid, pg_text, pg_bin = pg_cases[idx]
    dtype, value = duck_cases[idx]
    assert pg_type_for(dtype).oid == oid, dtype
    assert result_encoder(dtype, 0)(value) == pg_text
    assert result_encoder(dtype, 1)(value) == pg_bin


TZ_CASES = [
    "'2024-01-02 03:04:05.5+00'::timestamptz",
    "'2024-07-02 03:04:05+00'::timestamptz",
    "'1900-01-01 12:00:00.5+00'::timestamptz",
    "'1850-01-01 12:00:00+00'::timestamptz",
    "'2024-03-10 07:30:00+00'::timestamptz",
]


@pytest.mark.parametrize(
    "tz", ["America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/Amsterdam"]
)
def test_timestamptz_in_session_zone(pg: str, tz: str) -> None:
    expected = pg_raw(pg, TZ_CASES, tz)
    got = duck_values(
        [c.replace("::timestamptz", "").replace("'", "TIMESTAMPTZ '", 1) for c in TZ_CASES], tz
    )
    for (oid, pg_text, pg_bin), (dtype, value) in zip(expected, got, strict=True):
        assert oid == 1184
        assert result_encoder(dtype, 0, tz)(value) == pg_text
        assert result_encoder(dtype, 1, tz)(value) == pg_bin


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[c[0][:50] for c in CASES])
def test_decode_postgres_bytes(idx: int, pg_cases, duck_cases) -> None:  # noqa: ANN001
    """PG's own text and binary output, read back as Bind parameters, re-encodes identically
    and binds in DuckDB to the same value DuckDB computes for the literal."""
    oid, pg_text, pg_bin = pg_cases[idx]
    dtype, value = duck_cases[idx]
    from_text = param_decoder(oid, 0)(pg_text)
    from_bin = param_decoder(oid, 1)(pg_bin)
    assert result_encoder(dtype, 1)(from_bin) == pg_bin
    assert result_encoder(dtype, 1)(from_text) == pg_bin
    assert result_encoder(dtype, 0)(from_bin) == pg_text
    cast = duckdb_type_for_oid(oid)
    if "[][]" in dtype:
        cast = dtype  # the OID does not say how many dimensions
    nan_in_list = isinstance(from_bin, list) and any(x != x for x in from_bin if x is not None)
    if cast and lossless_cast(dtype) is None and not nan_in_list:
        # (DuckDB's binder turns NaN inside a Python list into NULL: a known limitation)
        con = duckdb.connect()
        got = con.execute(f"SELECT ?::{cast}", [from_bin]).fetchone()[0]
        assert result_encoder(dtype, 1)(got) == pg_bin
        con.close()
