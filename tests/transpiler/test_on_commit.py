"""transpiler/on_commit.py: the ON COMMIT clause of CREATE TEMP TABLE taken out, its
action kept on the statement for the server."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, transpile


@pytest.mark.parametrize(
    ("sql", "duckdb", "on_commit"),
    [
        (
            "CREATE TEMP TABLE x (a int) ON COMMIT DROP",
            "CREATE TEMPORARY TABLE x (a INT)",
            ("drop", "x"),
        ),
        (
            'CREATE TEMPORARY TABLE IF NOT EXISTS "Stage" (a int) ON COMMIT DELETE ROWS',
            'CREATE TEMPORARY TABLE IF NOT EXISTS "Stage" (a INT)',
            ("delete rows", "Stage"),
        ),
        (
            "create temp table Snap on commit drop as select 1 as a",
            "CREATE TEMPORARY TABLE Snap AS SELECT 1 AS a",
            ("drop", "snap"),
        ),
        (
            "CREATE TEMP TABLE k (a int) ON COMMIT PRESERVE ROWS",
            "CREATE TEMPORARY TABLE k (a INT)",
            None,
        ),
    ],
)
def test_the_clause_is_taken_out(sql: str, duckdb: str, on_commit: tuple | None) -> None:
    (st,) = transpile(sql)
    assert st.sql == duckdb and st.on_commit == on_commit and st.kind == "ddl"


def test_errors_as_postgresql() -> None:
    with pytest.raises(TranspileError) as err:
        transpile("CREATE TABLE p (a int) ON COMMIT DROP")
    assert err.value.sqlstate == "42P16"
    assert str(err.value.message) == "ON COMMIT can only be used on temporary tables"
    with pytest.raises(TranspileError) as err:
        transpile("CREATE TEMP TABLE p (a int) ON COMMIT NOTHING")
    assert err.value.sqlstate == "42601"
