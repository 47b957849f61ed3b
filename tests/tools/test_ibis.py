"""Ibis 12 with its PostgreSQL backend (psycopg 3 + sqlglot; .ci/tools/ibis.txt) run by
tests/tools/ibis_script.py against a real server and against PostgreSQL 15: each step's
dtypes and values must be the same.

Ibis reads a table's schema through its own catalog query (pg_attribute, pg_type,
format_type, pg_class / pg_namespace) and compiles expressions to PostgreSQL SQL:
string functions, regexes, date_trunc / extract / to_char, intervals, percentile_cont,
array_agg, bool_or / bool_and, window frames, anti / semi joins as NOT EXISTS / EXISTS.
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("ibis_script.py")

# The one known difference: a `json` column is stored as DuckDB's JSON and described as
# jsonb. con.sql() describes its query through a temporary view Ibis looks up in the
# namespace `pg_my_temp_schema()` names (0 before, as PostgreSQL, until a temp object exists).
KNOWN = {"table_schema"}


def test_ibis_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "ibis",
        SCRIPT,
        tmp_path,
        lambda host, port, user, db: [f"postgres://{user}@{host}:{port}/{db}"],
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["list_tables"] == ["ib_p", "ib_t"]
    assert theirs["order_limit"] == [4, 3]
    assert theirs["insert"] == 4 and theirs["drop"] == ["ib_p", "ib_t", "ib_tmp"]
    assert "ERROR" not in str(theirs)
    assert ours["sql"] == theirs["sql"]
    assert {k for k, v in ours.items() if v != theirs.get(k)} == KNOWN
