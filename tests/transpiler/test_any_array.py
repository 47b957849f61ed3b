"""`x op ANY('{...}')` with an untyped array literal (transpiler/any_array.py)."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.any_array import parse_array_literal


def where(text: str) -> str:
    (st,) = transpile(f"SELECT 1 FROM t WHERE {text}")
    return st.sql.split(" WHERE ", 1)[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("c.relkind = ANY('{r,p,f}')", "c.relkind IN ('r', 'p', 'f')"),
        ("x = any ('{1, \"2\", NULL}')", "x IN ('1', '2', NULL)"),
        ("x < ANY('{1,2}')", "(x < '1' OR x < '2')"),
        ("x = ANY('{}')", "FALSE"),
        # left as written: nested arrays, a non-simple left side, typed arrays, params
        ("x = ANY('{{1},{2}}')", "x = ANY('{{1},{2}}')"),
        ("f(x) < ANY('{1,2}')", "F(x) < ANY('{1,2}')"),
        ("x = ANY(ARRAY[1, 2])", "x = ANY([1, 2])"),
        ("x = ANY($1)", "x = ANY($1)"),
    ],
)
def test_rewrite(text: str, expected: str) -> None:
    assert where(text) == expected


@pytest.mark.parametrize(
    ("literal", "items"),
    [
        ("{a,b}", ["a", "b"]),
        ('{ "a b" , "c\\"d", null }', ["a b", 'c"d', None]),
        ('{"NULL"}', ["NULL"]),
        ("{}", []),
        ("{a,}", None),
        ("{{a}}", None),
        ("a,b", None),
        ('{"a}', None),
    ],
)
def test_parse_array_literal(literal: str, items: list[str | None] | None) -> None:
    assert parse_array_literal(literal) == items
