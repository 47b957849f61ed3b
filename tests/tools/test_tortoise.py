"""Tortoise ORM 1.1 over asyncpg 0.32 (.ci/tools/tortoise.txt) run by
tests/tools/tortoise_script.py, and Aerich 0.10 (its migrations) by
tests/tools/aerich_script.py, against a real server and against PostgreSQL 15: every
step's result (or error class and SQLSTATE) must be the same, but for KNOWN_DIFFERENCES.

tortoise_script: `generate_schemas()` of models with a ForeignKeyField on_delete CASCADE,
a ManyToManyField (its through table), CharField max_length and index=True, DecimalField,
DatetimeField auto_now_add, JSONField, IntEnumField / CharEnumField, unique_together, a
UUID primary key and every other field type (TimeDeltaField, BinaryField, the postgres
ArrayField, ...); create / bulk_create / get_or_create / update_or_create / bulk_update /
in_bulk; filters with Q and F, `__in`, `__icontains`, `__isnull`, `__range`, `__year`,
jsonb `__contains` / `__filter`, array `__contains` / `__overlap` / `__len`,
`__posix_regex`, a Subquery; values / values_list / distinct / only / exists / first /
offset+limit; prefetch_related / select_related / fetch_related (FK and M2M); annotate
with Count / Sum / Avg / Max, group_by, a filter on an annotation (`HAVING COUNT(..) >=
$1`), Lower / Upper / Length / Coalesce, Case/When; update with F, save(update_fields),
select_for_update; `in_transaction()` rolled back by an exception, committed, and failed
by an IntegrityError; IntegrityError on a unique, a unique_together and a foreign key;
raw SQL (execute_query_dict with $1, Model.raw); delete cascading to the FK and M2M rows;
generate_schemas(safe=True) again; bulk_create with ignore_conflicts (ON CONFLICT DO
NOTHING) and update_fields / on_conflict (DO UPDATE), get_or_none, a filter through an
M2M; a filter back across a reverse relation that Tortoise joins twice under one alias
(42712 on both).

aerich_script: `aerich init`, `init-db`, `migrate` after a model gained a column with a
default, a commented column and an index and a varchar was widened, `heads`, `upgrade`,
`history`, `inspectdb`, `downgrade` (`DROP INDEX ...; ALTER TABLE ... DROP COLUMN` in one
script), each followed by the catalog (information_schema.columns, pg_indexes) and rows.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("tortoise_script.py")
AERICH = Path(__file__).with_name("aerich_script.py")

# Steps whose result differs from PostgreSQL 15's, each named in docs/compatibility.md
# ("What differs"); the test fails when one starts to match, so the list stays true.
KNOWN_DIFFERENCES: dict[str, str] = {
    "coalesce": "COALESCE(numeric(8,2) column, 0) gives 0.00 where PostgreSQL gives 0 "
    "(a DuckDB DECIMAL value has its type's scale, a numeric keeps its own)",
}
AERICH_KNOWN_DIFFERENCES: dict[str, str] = {
    "inspectdb": "the columns come in join order (Aerich's catalog query has no ORDER BY; "
    "PostgreSQL happens to give attnum order)",
}


def test_tortoise_orm_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "tortoise", SCRIPT, tmp_path, lambda host, port, user, db: [f"{host}:{port}", user, db]
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["schema"] == ["tt_author", "tt_book", "tt_book_tag", "tt_kind", "tt_tag"]
    assert theirs["create"] == [1, 2, True, 4]
    assert theirs["aggregates"]["filter_annotated"] == ["Ann", "Bob"]
    assert theirs["integrity"] == {
        "unique": ["error", "IntegrityError", "23505"],
        "unique_together": ["error", "IntegrityError", "23505"],
        "foreign_key": ["error", "IntegrityError", "23503"],
        "after": 4,
    }
    assert theirs["transaction"][0] == 0 and theirs["transaction"][3][2] == "23505"
    assert theirs["array_len"] == 1 and theirs["coalesce"][1] == "0"
    assert theirs["delete"] == [1, ["One"], "sci", 1]
    assert theirs["reverse_filter"] == ["error", "OperationalError", "42712"]
    failed = {k: v for k, v in theirs.items() if isinstance(v, list) and v[:1] == ["error"]}
    assert set(failed) == {"reverse_filter"}, failed
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    same = {k: ours[k] for k in theirs if k not in KNOWN_DIFFERENCES}
    assert same == {k: theirs[k] for k in same}
    for step in KNOWN_DIFFERENCES:
        assert ours[step] != theirs[step], f"{step} now matches PostgreSQL: update the docs"
    assert ours["coalesce"] == ["13.50", "0.00", "1.99", "101.00"]


def test_aerich_migrations_as_on_postgresql(tmp_path: Path) -> None:
    def args(host: str, port: int, user: str, db: str) -> list[str]:
        project = tempfile.mkdtemp(dir=tmp_path)  # one project per server
        return [f"{host}:{port}", user, db, project]

    theirs, ours = run_on_postgres_and_hatiproxy("tortoise", AERICH, tmp_path, args)
    assert theirs["migration_files"] == ["N_DATE_init.py", "N_DATE_rating.py"]
    assert theirs["upgrade"] == [0, ["Success upgrading to N_DATE_rating.py"]]
    assert theirs["downgrade"] == [0, ["Success downgrading to N_DATE_rating.py"]]
    assert [c[1] for c in theirs["v2"]["columns"] if c[0] == "ae_shop"][-2:] in (
        ["rating", "city"],
        ["city", "rating"],
    )
    assert theirs["v3"]["versions"] == ["N_DATE_init.py"]
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    same = {k: ours[k] for k in theirs if k not in AERICH_KNOWN_DIFFERENCES}
    assert same == {k: theirs[k] for k in same}
    for step in AERICH_KNOWN_DIFFERENCES:
        assert ours[step] != theirs[step], f"{step} now matches PostgreSQL: update the docs"
    # inspectdb: the same model lines, in another order
    assert ours["inspectdb"][0] == 0
    assert sorted(ours["inspectdb"][1]) == sorted(theirs["inspectdb"][1])
