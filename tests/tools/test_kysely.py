"""Kysely 0.28 (npm `kysely`, its PostgresDialect over node-postgres; pinned in
tests/node/package-lock.json), run by tests/tools/test_kysely.js against a real server and
against PostgreSQL 15: the two must print the same results. The Migrator (createTable with
serial, varchar(n), timestamptz DEFAULT now(), a foreign key ON DELETE CASCADE; createIndex;
addColumn; createSchema, createType asEnum, withSchema, a composite unique constraint,
createView; migrateToLatest twice, migrateDown, migrateTo, up again; its kysely_migration and
kysely_migration_lock tables and pg_advisory_lock), db.introspection.getTables() (types,
type schemas, defaults, nullability and auto-increment read from pg_catalog, views, a
bigserial key, an enum column and a second schema), the query builder
(innerJoin / groupBy / count, where in / or / exists, insert ... returning, ON CONFLICT DO
NOTHING / DO UPDATE with excluded, update, delete with the cascade) and transactions (a
rollback, a controlled one with a savepoint rolled back to after a unique violation, after
an UPDATE of a table with a serial key). Kysely's catalog queries are differential cases
(tests/differential/cases/postgresjs_kysely.sql)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import start_server
from tests.differential.pgcluster import start_pg
from tests.tools.test_postgresjs import NODE_DIR, run_script


def test_kysely_answers_as_postgresql(tmp_path: Path) -> None:
    if not (NODE_DIR / "node_modules" / "kysely").is_dir():  # a fresh checkout: npm ci
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    pg = start_pg()
    try:
        theirs = run_script("test_kysely.js", pg.port)
    finally:
        pg.stop()
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        ours = run_script("test_kysely.js", srv.port)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{srv.log()[-4000:]}") from None
    finally:
        srv.stop()
    # avg(integer) is numeric in PostgreSQL, double here (known_differences.sql
    # avg_int_is_numeric): node-postgres gives a string there, a number here
    assert theirs["maxAge"].pop("mean") == "1.3333333333333333"
    assert ours["maxAge"].pop("mean") == 1.3333333333333333
    # a view's column over a varchar(n) column is varchar, as in PostgreSQL
    # (proxy/pgserver/view_types.py)
    for side in (theirs, ours):
        view = next(t for t in side["tables"] if t["name"] == "ky_pet_names")
        assert view["isView"] and view["columns"][1]["dataType"] == "varchar"
    # ROLLBACK TO after a write that used DEFAULT now() is refused (README: Savepoints):
    # a replay would give the row a new transaction time
    assert (theirs.pop("nowSavepoint"), theirs.pop("jens")) == ("committed", 1)
    assert (ours.pop("nowSavepoint"), ours.pop("jens")) == ("0A000", 0)
    assert theirs["second"] == {"error": None, "results": []}
    assert theirs["down"] == {"error": None, "results": [["2024_03_schema", "Down", "Success"]]}
    assert theirs["downTo"] == {"error": None, "results": [["2024_02_more", "Down", "Success"]]}
    person = next(t for t in theirs["tables"] if t["name"] == "ky_person")
    assert person["columns"][0] == {
        "dataType": "int4", "dataTypeSchema": "pg_catalog", "hasDefaultValue": True,
        "isAutoIncrementing": True, "isNullable": False, "name": "id",
    }  # fmt: skip
    assert theirs["savepointError"] == "23505" and theirs["petsLeft"] == ["Nemo"]
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
