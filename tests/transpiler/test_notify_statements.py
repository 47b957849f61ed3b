"""LISTEN / UNLISTEN / NOTIFY parsed from tokens (channel folding, payload literal)."""

from __future__ import annotations

import pytest

from transpiler.dialects import POSTGRES, tokenize
from transpiler.notify_statements import NotifyStatement, parse_notify_statement


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("LISTEN Jobs", NotifyStatement("LISTEN", "jobs")),
        ('listen "MyChan"', NotifyStatement("LISTEN", "MyChan")),
        ("UNLISTEN c;", NotifyStatement("UNLISTEN", "c")),
        ("UNLISTEN *", NotifyStatement("UNLISTEN", None)),
        ("NOTIFY c", NotifyStatement("NOTIFY", "c", "")),
        ("NOTIFY C, 'it''s'", NotifyStatement("NOTIFY", "c", "it's")),
        ("NOTIFY c, E'a\\nb'", NotifyStatement("NOTIFY", "c", "a\nb")),
        ("NOTIFY c, $$x$$", NotifyStatement("NOTIFY", "c", "x")),
    ],
)
def test_parsed(sql: str, expected: NotifyStatement) -> None:
    assert parse_notify_statement(tokenize(POSTGRES, sql)) == expected


@pytest.mark.parametrize(
    "sql", ["LISTEN", "LISTEN *", "NOTIFY 'c'", "NOTIFY c, 1", "NOTIFY c 'p'", "LISTEN a, b"]
)
def test_not_a_statement(sql: str) -> None:
    assert parse_notify_statement(tokenize(POSTGRES, sql)) is None
