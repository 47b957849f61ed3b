"""ALTER TABLE with several actions becomes one ALTER TABLE per action (alter_actions.py)."""

from __future__ import annotations

import pytest

from transpiler.alter_actions import split_actions
from transpiler.dialects import POSTGRES
from transpiler.splitter import split


def _parts(sql: str) -> list[str] | None:
    (chunk,) = split(sql, POSTGRES)
    parts = split_actions(chunk, POSTGRES)
    return None if parts is None else [text for text, _ in parts]


@pytest.mark.parametrize(
    ("sql", "parts"),
    [
        (
            "ALTER TABLE t ADD COLUMN a int, ADD COLUMN b text DEFAULT 'x, y'",
            ["ALTER TABLE t ADD COLUMN a int", "ALTER TABLE t ADD COLUMN b text DEFAULT 'x, y'"],
        ),
        (  # commas inside parentheses, brackets and strings stay with their action
            "ALTER TABLE IF EXISTS ONLY public.t ADD COLUMN c numeric(10,2),"
            " ADD COLUMN d text[] DEFAULT ARRAY['p','q'], ADD CONSTRAINT k CHECK (a IN (1, 2))",
            [
                "ALTER TABLE IF EXISTS ONLY public.t ADD COLUMN c numeric(10,2)",
                "ALTER TABLE IF EXISTS ONLY public.t ADD COLUMN d text[] DEFAULT ARRAY['p','q']",
                "ALTER TABLE IF EXISTS ONLY public.t ADD CONSTRAINT k CHECK (a IN (1, 2))",
            ],
        ),
        (
            'ALTER TABLE "S"."T" DROP COLUMN a, DROP COLUMN "b,c"',
            ['ALTER TABLE "S"."T" DROP COLUMN a', 'ALTER TABLE "S"."T" DROP COLUMN "b,c"'],
        ),
    ],
)
def test_each_action_gets_its_own_statement(sql: str, parts: list[str]) -> None:
    assert _parts(sql) == parts


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER TABLE t ADD COLUMN c numeric(10,2)",
        "ALTER TABLE t RENAME TO u",
        "ALTER INDEX i RENAME TO j",
        "ALTER TABLE t ADD COLUMN a int,",  # an empty action: DuckDB answers it as written
        # a type change: alter_type.py reads every clause for one rebuild
        "ALTER TABLE t ALTER COLUMN c TYPE int, ALTER COLUMN c SET NOT NULL",
    ],
)
def test_one_action_is_left_as_written(sql: str) -> None:
    assert _parts(sql) is None


@pytest.mark.parametrize(
    ("sql", "duckdb"),
    [
        # PostgreSQL's RENAME [COLUMN]: Alembic's alter_column(new_column_name=...)
        ("ALTER TABLE t RENAME a TO b", "ALTER TABLE t RENAME COLUMN a TO b"),
        ('ALTER TABLE IF EXISTS ONLY s.t RENAME "A" TO "b";', 'ALTER TABLE IF EXISTS ONLY s.t RENAME COLUMN "A" TO "b"'),
        ("ALTER TABLE t RENAME COLUMN a TO b", "ALTER TABLE t RENAME COLUMN a TO b"),
        ("ALTER TABLE t RENAME TO u", "ALTER TABLE t RENAME TO u"),
    ],
)  # fmt: skip
def test_rename_without_column_word(sql: str, duckdb: str) -> None:
    from transpiler import transpile

    assert [st.sql for st in transpile(sql)] == [duckdb]
