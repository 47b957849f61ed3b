"""transpiler/name_types.py: result columns PostgreSQL types name / name[]."""

from __future__ import annotations

import pytest

from transpiler import transpile


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT relname, relkind FROM pg_class", ("name", None)),
        ("SELECT c.relname AS t, n.nspname FROM pg_catalog.pg_class c JOIN pg_namespace n "
         "ON n.oid = c.relnamespace", ("name", "name")),
        ("SELECT array_agg(a.attname) AS cols, array_agg(a.attnum) FROM pg_attribute a",
         ("name[]", None)),
        ("SELECT t.typname e, array_agg(e.enumlabel ORDER BY enumsortorder) v FROM pg_type t "
         "JOIN pg_enum e ON t.oid = e.enumtypid GROUP BY 1", ("name", "name[]")),
        ("SELECT current_user, session_user, user, current_schema(), current_schemas(true), "
         "'x'::name, 'x'::text", ("name", "name", "name", "name", "name[]", "name", None)),
        ("SELECT table_name, data_type FROM information_schema.columns", ("name", None)),
        ("SELECT coalesce(relname, 'x'), relname || 'x', relname::text FROM pg_class",
         ("name", None, None)),
        ("SELECT s.r FROM (SELECT relname AS r FROM pg_class) s", ("name",)),
        ("SELECT (SELECT relname FROM pg_class LIMIT 1) AS r", ("name",)),
    ],
)  # fmt: skip
def test_name_columns(sql: str, expected: tuple[str | None, ...]) -> None:
    (st,) = transpile(sql)
    assert st.name_outputs == expected


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT relname FROM my_table",  # a user table's column of that name: text
        "SELECT relname FROM pg_class, my_table",  # which one has it is not known here
        "SELECT table_name FROM columns",  # information_schema's only when qualified
        "SELECT * FROM pg_class",
        "SELECT 1",
    ],
)
def test_not_name(sql: str) -> None:
    (st,) = transpile(sql)
    assert st.name_outputs is None


def test_current_catalog_is_the_database_name() -> None:
    """DuckDB's CURRENT_CATALOG is its own catalog ("memory"); PostgreSQL's is the database."""
    (st,) = transpile("SELECT current_catalog")
    assert st.sql == "SELECT CURRENT_DATABASE()"
    assert st.column_names == ("current_catalog",) and st.name_outputs == ("name",)
