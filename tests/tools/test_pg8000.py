"""pg8000 1.31.6 (pure Python; the driver under the AWS and Google Cloud SQL Python
connectors; .ci/tools/agentfw.txt) run by tests/tools/pg8000_script.py against
PostgreSQL 15 and against a real server: every step's result (or error class and SQLSTATE
and message) must be the same, but for KNOWN_DIFFERENCES.

The native interface: parameter_statuses, RowDescription OIDs, `run` with named
parameters (pg8000 sends every parameter untyped, in text) of int, bigint, float,
Decimal, bool, str, '', None, bytes, date, time, naive and aware datetime, timedelta,
UUID, int and str lists, dict (json), the same values typed by a table's columns
(int4 ... jsonb, int4[], text[]) and decoded back, casts of parameters, INSERT ...
RETURNING, row_count, `= ANY(:list)`; errors 23505 (with the constraint's name), 23502,
42601, 42P01, 22012, 42725 and the connection usable after each; a transaction rolled
back, one failed by a 23505 (25P02 until ROLLBACK); COPY FROM STDIN (text with \\N and
an escaped tab, csv with a header and a quoted comma) and COPY TO STDOUT (text, csv of a
query) through `stream`, a bad COPY row (22P02 in PostgreSQL's words); NOTICEs (`DROP
TABLE IF EXISTS`, `CREATE TABLE IF NOT EXISTS`) with their severity and SQLSTATE;
`prepare()` run twice. The DB-API: paramstyle, executemany + commit, description,
fetchone / fetchall / rowcount, rollback, 23505, 22001 (varchar(20)), autocommit, COPY TO
STDOUT through `cursor.execute(..., stream=...)`.
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("pg8000_script.py")

# Steps whose result differs from PostgreSQL 15's, each named in docs/compatibility.md
# ("pg8000"); the test fails when one starts to match, so the list stays true.
KNOWN_DIFFERENCES: dict[str, str] = {
    "named_reuse": "42725 as here, in DuckDB's words (PostgreSQL: operator is not unique)",
}


def test_pg8000_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "agentfw", SCRIPT, tmp_path, lambda host, port, user, db: [host, str(port), user, db]
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["unique_violation"][2:] == [
        "23505",
        'duplicate key value violates unique constraint "p8_items_name_key"',
    ]
    assert theirs["copy_bad_row"][2:] == ["22P02", 'invalid input syntax for type integer: "x"']
    assert theirs["copy_in"][:2] == [3, 2]
    assert theirs["notices"][1] == ["b'NOTICE'", "b'42P07'", "b'relation \"p8_copy\" already exists, skipping'"]  # fmt: skip
    assert theirs["transaction"][1][2] == "25P02"
    assert theirs["dbapi_too_long"][2] == "22001"
    assert theirs["typed_params"][0][0][-1] == {"dict": {"a": [1, 2, {"dict": {"b": None}}]}}
    assert "fatal" not in theirs and "fatal" not in ours
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    same = {k: ours[k] for k in theirs if k not in KNOWN_DIFFERENCES}
    assert same == {k: theirs[k] for k in same}
    for step in KNOWN_DIFFERENCES:
        assert ours[step] != theirs[step], f"{step} now matches PostgreSQL: update the docs"
    assert ours["named_reuse"][2] == theirs["named_reuse"][2] == "42725"
    assert ours["dbapi_select"][1:] == theirs["dbapi_select"][1:]
