"""GRANT, REVOKE and ALTER DEFAULT PRIVILEGES are acknowledged (the server answers them
with a WARNING that nothing changed: tests/clients/test_pg_restore_from_postgres.py);
role statements are a clear 0A000 that says what hatiproxy does instead, never a syntax
error a user would take for a typo."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, UtilityCommand, transpile


@pytest.mark.parametrize(
    ("sql", "tag", "action"),
    [
        ("GRANT SELECT ON t TO PUBLIC", "GRANT", "grant"),
        ("grant usage on schema public to bob", "GRANT", "grant"),
        ("GRANT SELECT(note),UPDATE(note) ON TABLE app.orders TO reporting", "GRANT", "grant"),
        ("REVOKE ALL ON SCHEMA public FROM PUBLIC", "REVOKE", "revoke"),
        (
            "ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA app GRANT SELECT ON TABLES"
            "  TO reporting",
            "ALTER DEFAULT PRIVILEGES",
            "default grant",
        ),
        (
            "ALTER DEFAULT PRIVILEGES REVOKE ALL ON TABLES FROM PUBLIC",
            "ALTER DEFAULT PRIVILEGES",
            "default revoke",
        ),
    ],
)
def test_privilege_statements_are_acknowledged(sql: str, tag: str, action: str) -> None:
    (st,) = transpile(sql)
    assert (st.kind, st.tag) == ("utility", tag)
    assert st.command == UtilityCommand(f"privileges {action}")


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("CREATE ROLE reporting LOGIN", "CREATE ROLE"),
        ("ALTER USER app WITH PASSWORD 'x'", "ALTER USER"),
        ("DROP ROLE IF EXISTS reporting", "DROP ROLE"),
    ],
)
def test_role_statements_are_refused_with_what_to_do(sql: str, what: str) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert info.value.sqlstate == "0A000"
    assert info.value.message.startswith(f"{what} is not supported")
    assert "belongs to the login that created it" in info.value.message


def test_role_statement_inside_a_script_names_its_own_position() -> None:
    with pytest.raises(TranspileError) as info:
        transpile("SELECT 1; CREATE ROLE r")
    assert info.value.position == len("SELECT 1; ") + 1
