"""ADBC's PostgreSQL driver 1.13 (adbc-driver-postgresql + adbc-driver-manager + pyarrow,
.ci/tools/adbc.txt; the driver bundles libpq) run by tests/tools/adbc_script.py against a
real server and against PostgreSQL 15: the two must print the same.

The driver reads every result as `COPY (<query>) TO STDOUT (FORMAT binary)` (so the query
inside COPY is transpiled as a SELECT is: `2.5::numeric`, `1/0`), describes it with
`pg_type` read at connect time (`WHERE typreceive != 0 OR typsend != 0`: a regproc column
compared with an oid), binds parameters, ingests Arrow tables with CREATE TABLE
"public" . "t" and `COPY ... FROM STDIN (FORMAT binary)` (create, append, replace,
create_append; `$1::regclass` of a name with spaces around the dot), and answers
adbc_get_objects / adbc_get_table_schema from the catalog (`CROSS JOIN UNNEST(conkey) AS
conkeys`). Its catalog queries are differential cases (tests/differential/cases/adbc.sql).
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("adbc_script.py")


def test_adbc_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "adbc",
        SCRIPT,
        tmp_path,
        lambda host, port, user, db: [f"postgresql://{user}@{host}:{port}/{db}"],
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["select"]["schema"][2] == (
        "n: extension<arrow.opaque[storage_type=string, type_name=numeric, vendor_name=PostgreSQL]>"
    )
    assert theirs["select"]["schema"][12:] == [
        "j: extension<arrow.json>", "a: list<item: int32>", "ta: list<item: string>"
    ]  # fmt: skip
    assert theirs["expr"]["rows"] == [["1", "'x'", "None", "'2.5'"]]
    assert [theirs[k] for k in ("ingest_create", "ingest_append", "ingest_replace")] == [3, 1, 2]
    assert theirs["objects"][1][4] == [["PRIMARY KEY", ["i"]]]
    assert theirs["after_tx"] == [[11]] and theirs["database_listed"] is True
    assert theirs["errors"] == [
        ["IntegrityError", "23505"], ["IntegrityError", "23502"],
        ["ProgrammingError", "42P01"], ["DataError", "22012"],
    ]  # fmt: skip
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
