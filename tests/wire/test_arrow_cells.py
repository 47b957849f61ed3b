"""The vectorised (Arrow) encoders give the same bytes as the per-value encoders.

The per-value encoders are checked against PostgreSQL by the differential and type tests;
here every value of a column of edge cases goes through both paths, text and binary.
"""

from __future__ import annotations

import duckdb
import pytest

from proxy.wire.arrow_cells import cells, plan_for
from proxy.wire.types import result_encoder

COLUMNS = {
    "INTEGER": "[0, 1, -1, 2147483647, -2147483648, NULL]",
    "BIGINT": "[0, -9223372036854775807, 9223372036854775807, 42, NULL]",
    "SMALLINT": "[0, -32768, 32767, NULL]",
    "TINYINT": "[0, -128, 127]",
    "UINTEGER": "[0, 4294967295]",
    "BOOLEAN": "[true, false, NULL]",
    "VARCHAR": "['', 'a', 'tab\there', 'ünï', NULL, 'x' || repeat('y', 300)]",
    "DECIMAL(15,2)": "[0, -0.05, 0.05, 12345678901.23, -9999999999999.99, 1, NULL]",
    "DECIMAL(4,1)": "[0, -0.1, 999.9, -999.9, 10]",
    "DECIMAL(18,6)": "[0, -0.000001, 123456789012.345678, -1, 0.5]",
    "DECIMAL(9,4)": "[0, 10000, 0.0001, -12345.6789, 1.1]",
    "DECIMAL(18,0)": "[0, 100000000, -999999999999999999, 10000]",
    "DECIMAL(30,8)": "[0, -0.00000001, 1234567890123456789012.5]",
    "DATE": "['2024-02-29', '1970-01-01', '0001-01-01', '9999-12-31', '2000-01-01', NULL]",
    "TIMESTAMP": "['2024-01-01 12:00:00.5', '2024-01-01 00:00:00', '1999-12-31 23:59:59.000001',"
    " '0001-01-01 00:00:00', NULL]",
    "TIMESTAMPTZ": "['2024-01-01 12:00:00.5+00', '2024-06-01 00:00:00+02', NULL]",
    "DOUBLE": "[0.1, -0.0, 1e300, 'inf', 'nan', NULL]",
    "JSON": "['{\"a\": 1}', '[]', NULL]",
}


@pytest.mark.parametrize("fmt", [0, 1])
@pytest.mark.parametrize("duckdb_type", list(COLUMNS))
def test_vectorised_cells_equal_per_value_encoders(duckdb_type: str, fmt: int) -> None:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    sql = f"SELECT unnest(CAST({COLUMNS[duckdb_type]} AS {duckdb_type}[])) AS v"
    values = [r[0] for r in con.execute(sql).fetchall()]
    col = con.execute(sql).to_arrow_table().column(0).combine_chunks()
    plan = plan_for(duckdb_type, fmt, "UTC")
    if plan is None:  # only these need the per-value path
        assert (duckdb_type, fmt) in {
            ("DOUBLE", 0),  # shortest round-trip text stays with Python's repr
            ("DECIMAL(30,8)", 0),  # scale > 6 beyond int64: Arrow would print 1E-8
            ("DECIMAL(30,8)", 1),  # digits beyond int64
            ("DECIMAL(18,6)", 1),  # 18 digits + padding to whole base-10000 groups
        }
        return
    enc = result_encoder(duckdb_type, fmt, "UTC")
    expected = [None if v is None else enc(v) for v in values]
    assert cells(col, plan).to_pylist() == expected
    # a slice (portal suspension cuts batches) gives the same cells
    assert cells(col.slice(1), plan).to_pylist() == expected[1:]


def test_timestamptz_text_in_another_zone_takes_the_per_value_path() -> None:
    assert plan_for("TIMESTAMP WITH TIME ZONE", 0, "Europe/Paris") is None
    assert plan_for("TIMESTAMP WITH TIME ZONE", 1, "Europe/Paris") is not None
