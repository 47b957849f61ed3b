"""CREATE / DROP DATABASE read as PostgreSQL 15's grammar does (transpiler/database_ddl.py)."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, transpile
from transpiler.database_ddl import DatabaseDdl, parse


@pytest.mark.parametrize(
    ("sql", "ddl"),
    [
        ('CREATE DATABASE "test_x" ', DatabaseDdl("create", "test_x")),  # Django, trailing space
        ("create database Shop", DatabaseDdl("create", "shop")),
        (  # pg_dump --create
            "CREATE DATABASE d WITH TEMPLATE = template0 ENCODING = 'UTF8' "
            "LOCALE_PROVIDER = libc LOCALE = 'C.UTF-8';",
            DatabaseDdl("create", "d", template="template0", encoding="UTF8"),
        ),
        (  # Django --parallel
            'CREATE DATABASE "test_x_1" WITH TEMPLATE "test_x"',
            DatabaseDdl("create", "test_x_1", template="test_x"),
        ),
        (
            "CREATE DATABASE r ENCODING = 'utf8'",
            DatabaseDdl("create", "r", encoding="UTF8"),
        ),  # Rails
        ("CREATE DATABASE c CONNECTION LIMIT = 5 OWNER me", DatabaseDdl("create", "c")),
        ("CREATE DATABASE t TEMPLATE DEFAULT", DatabaseDdl("create", "t")),
        ('DROP DATABASE "test_x"', DatabaseDdl("drop", "test_x")),
        ("DROP DATABASE IF EXISTS x", DatabaseDdl("drop", "x", if_exists=True)),
        ('drop database "A""b" WITH (FORCE)', DatabaseDdl("drop", 'A"b', force=True)),
        ("DROP DATABASE x (force)", DatabaseDdl("drop", "x", force=True)),
    ],
)
def test_parse(sql: str, ddl: DatabaseDdl) -> None:
    assert parse(sql) == ddl
    [st] = transpile(sql)
    assert st.command == ddl and st.tag == f"{ddl.action.upper()} DATABASE"
    assert st.outside_block == st.tag  # 25001 inside a transaction block


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE DATABASE", 'syntax error at or near "end of input"'),
        ("CREATE DATABASE x COLOUR red", 'option "colour" not recognized'),
        ("CREATE DATABASE x OWNER a OWNER b", "conflicting or redundant options"),
        ("CREATE DATABASE x TEMPLATE", "syntax error at end of input"),
        ('CREATE DATABASE ""', "zero-length delimited identifier"),
        ("DROP DATABASE x WITH (CASCADE)", 'unrecognized DROP DATABASE option "cascade"'),
        ("DROP DATABASE x CASCADE", 'syntax error at or near "CASCADE"'),
    ],
)
def test_refused_as_postgresql_does(sql: str, message: str) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert info.value.sqlstate == "42601" and info.value.message == message


def test_alter_database() -> None:
    [st] = transpile('ALTER DATABASE "Old" RENAME TO new')
    assert st.command == DatabaseDdl("rename", "Old", new_name="new")
    assert st.tag == "ALTER DATABASE" and st.outside_block == "ALTER DATABASE RENAME"
    [owner] = transpile("ALTER DATABASE shop OWNER TO hatidata")  # pg_dump --create's
    assert owner.tag == "ALTER DATABASE" and not isinstance(owner.command, DatabaseDdl)
    for sql in ("ALTER DATABASE d SET timezone TO 'UTC'", "ALTER DATABASE d SET ALIAS TO e"):
        with pytest.raises(TranspileError) as info:  # DuckDB's own form never reaches DuckDB
            transpile(sql)
        assert info.value.sqlstate == "0A000"
