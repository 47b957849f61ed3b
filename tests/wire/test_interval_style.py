"""SET IntervalStyle = iso_8601 (ActiveRecord sets it on every connection): interval
results in text (scalars, arrays, COPY, bound-parameter round trips) print as PostgreSQL 15
prints them ('P1Y2M3DT4H5M6.5S'); ISO 8601 text is read back as an interval parameter in
any style; postgres_verbose / sql_standard are 0A000, anything else 22023."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.string import TextLoader

from tests.conftest import ServerProcess

QUERY = (
    "SELECT interval '1 year 2 mons 3 days 04:05:06.5', interval '0', interval '-1.5 seconds',"
    " interval '-2 years -3 mons', interval '27 hours', interval '-1 days 01:00:00.000001',"
    " ARRAY[interval '1 day', interval '-1 mon']"
)
# PostgreSQL 15's answer (psql against PostgreSQL 15 with IntervalStyle iso_8601)
EXPECTED = (
    "P1Y2M3DT4H5M6.5S", "PT0S", "PT-1.5S", "P-2Y-3M", "PT27H", "P-1DT1H0.000001S",
    "{P1D,P-1M}",
)  # fmt: skip


def _connect(dsn: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, autocommit=True)
    for name in ("interval", 1187):  # psycopg cannot read iso_8601 itself (1187: interval[])
        conn.adapters.register_loader(name, TextLoader)
    return conn


def test_iso_8601_interval_output_and_input(server: ServerProcess, table_name: str) -> None:
    with _connect(server.dsn) as conn:
        conn.execute("SET intervalstyle = iso_8601")
        assert conn.execute("SHOW IntervalStyle").fetchone() == ("iso_8601",)
        assert conn.pgconn.parameter_status(b"IntervalStyle") == b"iso_8601"
        assert conn.execute(QUERY).fetchone() == EXPECTED
        conn.execute(f"CREATE TABLE {table_name} (d interval)")
        # ActiveRecord sends ActiveSupport::Duration#iso8601 as a parameter of no type
        conn.execute(f"INSERT INTO {table_name} VALUES (%s), (%s)", ["P1DT2H30M1.5S", "PT-1M"])
        got = conn.execute(f"SELECT d FROM {table_name} ORDER BY d").fetchall()
        assert got == [("PT-1M",), ("P1DT2H30M1.5S",)]
        with conn.cursor().copy(f"COPY {table_name} TO STDOUT") as copy:
            assert sorted(bytes(row) for row in copy) == [b"P1DT2H30M1.5S\n", b"PT-1M\n"]
        conn.execute("SET intervalstyle = postgres")
        got = conn.execute(f"SELECT d FROM {table_name} ORDER BY d").fetchall()
        assert got == [("-00:01:00",), ("1 day 02:30:01.5",)]


def test_interval_styles_not_kept_are_refused(server: ServerProcess) -> None:
    with _connect(server.dsn) as conn:
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("SET intervalstyle = sql_standard")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("SET intervalstyle = nope")
        assert conn.execute("SHOW IntervalStyle").fetchone() == ("postgres",)
