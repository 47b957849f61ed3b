"""Piccolo ORM 1.38 over asyncpg 0.32 (.ci/tools/piccolo.txt) run by
tests/tools/piccolo_script.py, and its migrations by tests/tools/piccolo_migrations_script.py,
against a real server and against PostgreSQL 15: every step's result (or error class and
SQLSTATE) must be the same, but for KNOWN_DIFFERENCES.

piccolo_script: `create_db_tables` (twice, if_not_exists) of tables with ForeignKey
(on_delete cascade, two to one table), Varchar(length), Numeric(digits), Timestamptz,
JSONB, Array of Varchar and Integer, M2M through a joining table, UUID, Date, Interval,
Real, Text, Bytea; insert (returning), save, objects().get / first / get_related /
get_or_create / to_dict, select with where (&, |, like, ilike, is_in, not_in, is_null),
joins through `.manager.name`, as_alias, order_by / limit / offset, distinct,
output(as_json / as_list / load_json), exists, count (where, distinct), JSONB arrow /
from_path (`#> $1`), Array any / not_any / cat / index, M2M add / remove / get_m2m and
select of an M2M as a list (both ways), group_by with Count / Sum, Avg / Max, update with
arithmetic (returning), save of one column, delete cascading, transactions (rolled back,
committed, a savepoint rolled back to, failed by a 23505), 23505 / 23503 / 23502 errors,
raw SQL; `on_conflict` DO NOTHING / DO UPDATE (returning), `lock_rows("UPDATE",
skip_locked=True)`, `batch()` (a cursor in a transaction), the Alter API (add_column,
set_length, rename_column, set_null, drop_column), create_index and `indexes()`.

piccolo_migrations_script: `piccolo migrations new --auto`, `forwards`, a table gaining an
Integer with a default and an index, a JSONB, a NOT NULL Varchar array with a default (to a
table with rows) and a wider Varchar, `new --auto` and `forwards` again, `check`,
`schema generate` (its catalog queries), `backwards`; information_schema.columns and
pg_indexes after each.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("piccolo_script.py")
MIGRATIONS = Path(__file__).with_name("piccolo_migrations_script.py")

# Steps whose result differs from PostgreSQL 15's, each named in docs/compatibility.md
# ("What differs"); the test fails when one starts to match, so the list stays true.
KNOWN_DIFFERENCES: dict[str, str] = {
    "avg": "avg() of an integer or numeric column is double precision (PostgreSQL: numeric)",
}


def test_piccolo_orm_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "piccolo", SCRIPT, tmp_path, lambda host, port, user, db: [f"{host}:{port}", user, db]
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["schema"] == [True] * 6
    assert theirs["from_path"] == [{"c": '"Oslo"'}]
    assert theirs["transactions"]["unique"][2] == "23505"
    assert theirs["transactions"]["foreign_key"][2] == "23503"
    assert theirs["transactions"]["not_null"][2] == "23502"
    assert theirs["transactions"]["savepoint"] == [{"name": "Savepointed"}]
    assert theirs["update_delete"]["m2m_after_cascade"] == 1
    failed = {k: v for k, v in theirs.items() if isinstance(v, list) and v[:1] == ["error"]}
    assert failed == {}, failed
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    same = {k: ours[k] for k in theirs if k not in KNOWN_DIFFERENCES}
    assert same == {k: theirs[k] for k in same}
    for step in KNOWN_DIFFERENCES:
        assert ours[step] != theirs[step], f"{step} now matches PostgreSQL: update the docs"
    assert ours["avg"]["fee"] == float(theirs["avg"]["fee"])


def test_piccolo_migrations_as_on_postgresql(tmp_path: Path) -> None:
    def args(host: str, port: int, user: str, db: str) -> list[str]:
        project = tempfile.mkdtemp(dir=tmp_path)  # one project per server
        return [f"{host}:{port}", user, db, project]

    theirs, ours = run_on_postgres_and_hatiproxy("piccolo", MIGRATIONS, tmp_path, args)
    assert theirs["forwards_2"][0] == 0 and theirs["backwards"][0] == 0
    assert theirs["files"] == 2
    assert theirs["v2"]["rows"] == [["1", "Ann", "[]", "{}", "7"]]
    assert ["pm_artist", "aliases", "ARRAY", None, "'{}'::character varying[]", "NO"] in (
        theirs["v2"]["columns"]
    )
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    # every step, the catalog after each migration included (string defaults shown
    # cast to their column's type, '{}'::character varying[], as PostgreSQL shows them)
    assert ours == theirs
