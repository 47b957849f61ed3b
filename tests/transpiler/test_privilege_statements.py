"""GRANT, REVOKE and role statements: a clear 0A000 that says what hatiproxy does
instead, never a syntax error a user would take for a typo."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, transpile


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("GRANT SELECT ON t TO PUBLIC", "GRANT"),
        ("grant usage on schema public to bob", "GRANT"),
        ("REVOKE ALL ON SCHEMA public FROM PUBLIC", "REVOKE"),
        ("CREATE ROLE reporting LOGIN", "CREATE ROLE"),
        ("ALTER USER app WITH PASSWORD 'x'", "ALTER USER"),
        ("DROP ROLE IF EXISTS reporting", "DROP ROLE"),
        ("ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO x", "ALTER DEFAULT PRIVILEGES"),
    ],
)
def test_privilege_statements_are_refused_with_what_to_do(sql: str, what: str) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert info.value.sqlstate == "0A000"
    assert info.value.message.startswith(f"{what} is not supported")
    assert "belongs to the login that created it" in info.value.message


def test_grant_inside_a_script_names_its_own_position() -> None:
    with pytest.raises(TranspileError) as info:
        transpile("SELECT 1; GRANT SELECT ON t TO PUBLIC")
    assert info.value.position == len("SELECT 1; ") + 1
