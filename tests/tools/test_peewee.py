"""Peewee 4.5 (psycopg2; .ci/tools/peewee.txt) run by tests/tools/peewee_script.py
against a real server and against PostgreSQL 15: the two must print the same, but for
the GIN index below.

create_tables of two models (SERIAL keys, a ForeignKeyField ON DELETE CASCADE, a unique
CharField, a composite unique index, DateTimeField, DecimalField, BooleanField, a
BinaryJSONField with its GIN index), create_tables again (safe=True: CREATE TABLE IF NOT
EXISTS of a table with a foreign key), CRUD, a join, fn.COUNT with GROUP BY, jsonb `->>`
and `@>`, atomic() rolled back by an exception and by tx.rollback(), IntegrityError 23505 /
23503, the cascade, get_tables / get_columns / get_indexes (`FROM generate_subscripts
(idx.indkey, 1) AS k`) / get_primary_keys / get_foreign_keys (information_schema's
referential_constraints.delete_rule) / sequence_exists, and playhouse.reflection's
generate_models and print_table_sql. Its catalog queries are differential cases
(tests/differential/cases/peewee.sql).
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("peewee_script.py")


def test_peewee_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "peewee", SCRIPT, tmp_path, lambda host, port, user, db: [f"{host}:{port}", db]
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["counts"] == [["Ann", 2], ["Bob", 1]]
    assert theirs["duplicate"] == ["IntegrityError", "23505"]
    assert theirs["orphan"] == ["IntegrityError", "23503"]
    assert theirs["after_atomic"] == theirs["rolled_back"] == 0
    assert theirs["after_cascade"] == ["Three"]
    assert theirs["foreign_keys"] == [["author_id", "author", "id", "book"]]
    assert "ON DELETE CASCADE" in theirs["reflected_sql"][0]
    # USING gin is accepted and skipped here (DuckDB has no such index; docs/compatibility.md):
    # get_indexes has no book_meta, so reflection does not mark the jsonb field indexed.
    gin = ["book_meta", ["meta"], False, "CREATE INDEX book_meta ON public.book USING gin (meta)"]
    theirs["indexes"]["book"].remove(gin)
    meta = theirs["reflected"]["book"]["fields"][4]
    assert meta == ["meta", "BinaryJSONField", True, False, True]
    meta[4] = False
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
