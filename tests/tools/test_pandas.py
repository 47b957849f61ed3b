"""pandas 2.3 (SQLAlchemy 2.0 + psycopg 3, the venv of .ci/tools/alembic.txt) against a
real hatiproxy: tests/tools/pandas_script.py writes a DataFrame of int64, float64 (with
NaN), text (with a quote and None), bool and tz-aware datetime columns with
to_sql(method="multi"), if_exists="replace" then "append", reads it back with read_sql
(and with :named and %(pyformat)s parameters), replaces it with an indexed frame read by
read_sql_table, and writes 5,000 rows in chunks. Every value below is what the same
script prints against PostgreSQL 15 (checked when the test was written)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import start_server
from tests.tools.conftest import tool_program

SCRIPT = Path(__file__).with_name("pandas_script.py")
T1, T2 = "2024-01-01 10:00:00+00:00", "2024-06-30 21:59:59.123456+00:00"


def test_to_sql_read_sql_round_trip(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--database", ":memory:")
    try:
        url = f"postgresql+psycopg://tester@{server.host}:{server.port}/hatidata"
        proc = subprocess.run(
            [str(tool_program("alembic")), str(SCRIPT), url],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop()
    if proc.returncode != 0:
        pytest.fail(f"pandas_script failed:\n{proc.stdout}\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["types"] == [
        "('i', 'bigint')",
        "('f', 'double precision')",
        "('s', 'text')",
        "('b', 'boolean')",
        "('t', 'timestamp with time zone')",
    ]
    assert out["dtypes"] == {
        "i": "int64",
        "f": "float64",
        "s": "object",
        "b": "bool",
        "t": "datetime64[ns, UTC]",
    }
    rows = [["1", "1.5", "a", "True", T1], ["2", "-2.25", "b'c", "False", T2]]
    rows.append(["3", None, None, "True", None])
    assert out["rows"] == [row for row in rows for _ in range(2)]  # replaced, then appended
    assert out["params"] == [{"i": 3, "s": None}, {"i": 3, "s": None}]
    assert out["pyformat"] == 2
    assert out["replaced"] == [{"k": 7, "x": 10}, {"k": 8, "x": 20}]
    assert out["indexes"] == ["ix_pd_t_k"]  # to_sql indexes the DataFrame's index
    assert out["big"] == [5000, 12497500]
