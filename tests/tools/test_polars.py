"""Polars 2.1 with ConnectorX 0.4 and ADBC 1.13 (.ci/tools/polars.txt) run by
tests/tools/polars_script.py against a real server and against PostgreSQL 15: the dtypes
and values must be the same.

ConnectorX prepares `COPY (<query>) TO STDOUT WITH BINARY` and reads PostgreSQL's binary
COPY (int2/4/8, numeric as Decimal, text, bool, date, timestamp, timestamptz, float8,
bytea); with partition_on / partition_num it first asks `SELECT min(x), max(x) FROM
(<query>) AS CXTMPTAB_RANGE`, then runs a range query per partition on its own connection.
engine="adbc" reads the same query through ADBC's driver (arrays and jsonb too);
write_database with ADBC creates, appends to and replaces a table (COPY FROM STDIN binary),
and with SQLAlchemy (psycopg 3, through pandas) creates and appends to one.
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("polars_script.py")


def test_polars_connectorx_adbc_answer_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "polars",
        SCRIPT,
        tmp_path,
        lambda host, port, user, db: [f"postgresql://{user}@{host}:{port}/{db}"],
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["cx"]["dtypes"][2] == "amount: Decimal(precision=38, scale=10)"
    assert theirs["cx"]["rows"][1][2] == "Decimal('2.5000000000')"
    assert len(theirs["cx"]["rows"]) == len(theirs["cx_partitioned"]["rows"]) == 41
    assert theirs["cx_agg"]["dtypes"][1:3] == [
        "n: Int64",
        "total: Decimal(precision=38, scale=10)",
    ]  # fmt: skip  (sum(bigint) is numeric)
    assert theirs["adbc"]["rows"][1][2] == "'2.50'"
    assert [theirs[k] for k in ("write_adbc", "write_adbc_append", "write_adbc_replace")] == [
        3, 1, 2
    ]  # fmt: skip
    assert len(theirs["read_sa"]["rows"]) == 4
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
