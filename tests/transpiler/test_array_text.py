"""Array text into array columns (transpiler/array_text.py): only where the hints say the
target column is an array."""

from __future__ import annotations

import pytest

from transpiler import ColumnHints, transpile

HINTS = ColumnHints(
    {"t": {"id": "other", "a": "array", "v": "vector", "j": "json", "s": "text"}},
    order={"t": ["id", "a", "v", "j", "s"]},
)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "INSERT INTO t (a, s) VALUES ('{1,\"2 3\",NULL}', '{1}')",
            "INSERT INTO t (a, s) VALUES (['1', '2 3', NULL], '{1}')",
        ),
        (
            "INSERT INTO t VALUES (1, '{}', '{1.5}', '{\"k\":1}', '{x}')",
            "INSERT INTO t VALUES (1, [], ['1.5'], '{\"k\":1}', '{x}')",
        ),
        ("UPDATE t SET a = '{3}', j = '{\"a\":1}' WHERE id = 1", None),
        (
            "INSERT INTO t (id, a) VALUES (1, '{1}') ON CONFLICT (id) DO UPDATE SET a = '{2}'",
            "INSERT INTO t (id, a) VALUES (1, ['1']) ON CONFLICT(id) DO UPDATE SET a = ['2']",
        ),
        (
            "INSERT INTO t (a) VALUES ('{{1,2},{3,4}}')",
            "INSERT INTO t (a) VALUES ('{{1,2},{3,4}}')",
        ),
        ("INSERT INTO u (a) VALUES ('{1}')", "INSERT INTO u (a) VALUES ('{1}')"),
    ],
)
def test_array_text_into_array_columns(sql: str, expected: str | None) -> None:
    (st,) = transpile(sql, hints=HINTS)
    if expected is None:
        assert "a = ['3']" in st.sql and "j = '{\"a\":1}'" in st.sql
    else:
        assert st.sql == expected


def test_concat_written_to_an_array_column_takes_a_null_array_as_empty() -> None:
    """`SET a = a || $1` (Prisma's push): PostgreSQL's array_cat reads a NULL array as
    empty, DuckDB's `||` would give NULL; array text on either side is an array."""
    (st,) = transpile("UPDATE t SET a = a || $1, s = s || 'x' WHERE id = 1", hints=HINTS)
    assert "a = LIST_CONCAT(a, $1)" in st.sql and "s = s || 'x'" in st.sql
    (st,) = transpile("UPDATE t SET a = a || '{3,4}' WHERE id = 1", hints=HINTS)
    assert "a = LIST_CONCAT(a, ['3', '4'])" in st.sql
