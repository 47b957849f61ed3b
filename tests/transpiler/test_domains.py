"""transpiler/domains.py: reading CREATE / ALTER / DROP DOMAIN, a column's CHECK, the cast
macro and the rewrite of casts (the server's side: tests/test_domains_server.py)."""

from __future__ import annotations

import duckdb
import pytest

from transpiler import transpile
from transpiler.domains import (
    DomainCheck,
    add_table_checks,
    cast_macro,
    column_check,
    domain_columns,
    parse,
    rewrite_casts,
    value_expr,
)
from transpiler.errors import TranspileError


def test_create_as_pg_dump_writes_it() -> None:
    ddl = parse(
        "CREATE DOMAIN public.posint AS integer NOT NULL DEFAULT 1\n"
        "\tCONSTRAINT pos CHECK ((VALUE > 0))\n\tCONSTRAINT small CHECK ((VALUE < 100)) NOT VALID;"
    )
    assert (ddl.action, ddl.schema, ddl.name, ddl.base) == ("create", "main", "posint", "integer")
    assert (ddl.default, ddl.not_null) == ("1", True)
    assert ddl.checks == (
        DomainCheck("pos", "(VALUE > 0)"),
        DomainCheck("small", "(VALUE < 100)", not_valid=True),
    )


def test_create_forms() -> None:
    ddl = parse("create domain Email text default 'x' || 'y' check (value ~ '@') null")
    assert (ddl.schema, ddl.name, ddl.base, ddl.default) == (None, "email", "text", "'x' || 'y'")
    assert ddl.checks == (DomainCheck(None, "value ~ '@'"),) and not ddl.not_null
    ddl = parse('CREATE DOMAIN app."Code" AS varchar(5) COLLATE "C"')
    assert (ddl.schema, ddl.name, ddl.base, ddl.collation) == ("app", "Code", "varchar(5)", '"C"')


def test_alter_and_drop() -> None:
    assert parse("ALTER DOMAIN d SET DEFAULT now()").default == "now()"
    assert parse("ALTER DOMAIN d DROP NOT NULL").action == "drop_not_null"
    assert parse("ALTER DOMAIN d DROP CONSTRAINT IF EXISTS c").if_exists
    renamed = parse('ALTER DOMAIN d RENAME CONSTRAINT c TO "New"')
    assert (renamed.target, renamed.new_name) == ("c", "New")
    assert parse("ALTER DOMAIN d RENAME TO e").new_name == "e"
    assert parse("ALTER DOMAIN d OWNER TO bob").action == "noop"
    added = parse("ALTER DOMAIN d ADD CONSTRAINT c CHECK (VALUE > 1)")
    assert added.checks == (DomainCheck("c", "VALUE > 1"),)
    dropped = parse("DROP DOMAIN IF EXISTS a, s.b CASCADE")
    assert dropped.names == ((None, "a"), ("s", "b")) and dropped.cascade and dropped.if_exists
    with pytest.raises(TranspileError):
        parse("ALTER DOMAIN d VALIDATE SOMETHING ELSE")


def test_value_is_replaced_outside_strings_and_quotes() -> None:
    assert value_expr("VALUE ~ 'VALUE' AND length(value) > \"VALUE\"") == (
        "(__hati_value ~ 'VALUE' AND length(__hati_value) > \"VALUE\")"
    )


def test_statements_reach_the_server_as_commands() -> None:
    (st,) = transpile("CREATE DOMAIN d AS int CHECK (VALUE > 0)")
    assert st.tag == "CREATE DOMAIN" and st.command == parse(st.sql)


def test_column_check_and_cast_macro_in_duckdb() -> None:
    """The CHECK and the macro run in DuckDB with PostgreSQL's messages."""
    checks = [("pos", "(__hati_value > 0)")]
    check = column_check("main.posint", "posint", "p", checks, not_null=True)
    create = add_table_checks("CREATE TABLE t (id INT, p INT)", [check])
    assert domain_columns("CREATE TABLE t (id INT, p posint)", {"posint"}) == [
        ("p", "posint", False)
    ]
    con = duckdb.connect()
    con.execute(create)
    con.execute("INSERT INTO t VALUES (1, 5)")
    with pytest.raises(duckdb.ConstraintException, match='check constraint "pos"'):
        con.execute("INSERT INTO t VALUES (2, 0)")
    with pytest.raises(duckdb.ConstraintException, match="does not allow null values"):
        con.execute("INSERT INTO t VALUES (3, NULL)")
    macro = cast_macro("main.code", "code", "VARCHAR", [], False, max_length=3)
    con.execute(f"CREATE MACRO m(v) AS {macro}")
    assert con.execute("SELECT m('abcdef')").fetchone() == ("abc",)


def test_rewrite_casts() -> None:
    names = {"email": "__hati_domain_main_email", "app.price": "__hati_domain_app_price"}
    sql = "SELECT CAST('x' AS email), CAST(1 AS app.price), CAST(1 AS mood)"
    out = rewrite_casts(sql, names)
    assert out is not None
    assert out == (
        "SELECT __HATI_DOMAIN_MAIN_EMAIL('x'), __HATI_DOMAIN_APP_PRICE(1), CAST(1 AS mood)"
    )
    assert rewrite_casts("SELECT CAST(1 AS INT)", names) is None
