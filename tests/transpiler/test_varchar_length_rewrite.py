"""transpiler.varchar_length: varchar(n) columns of CREATE TABLE get a length CHECK that
DuckDB keeps and enforces; casts to varchar(n) truncate. Also pins the DuckDB behaviour the
design relies on (the constraint's text in duckdb_constraints(), the failure message, the
ALTER TABLE limits): a DuckDB upgrade that changes one of them shows here first."""

from __future__ import annotations

import duckdb
import pytest

from proxy.db.duckdb_errors import map_duckdb_error
from transpiler import transpile


def sql(text: str, dialect: str = "postgres") -> str:
    return transpile(text, dialect=dialect)[0].sql


@pytest.mark.parametrize(
    ("pg", "duck"),
    [
        (
            "CREATE TABLE t (name varchar(10))",
            "CREATE TABLE t (name TEXT CHECK (LENGTH(name) <= 10))",
        ),
        (
            "CREATE TABLE t (id int PRIMARY KEY, d character varying (5) NOT NULL)",
            "CREATE TABLE t (id INT PRIMARY KEY, d TEXT NOT NULL CHECK (LENGTH(d) <= 5))",
        ),
        (
            'CREATE TABLE IF NOT EXISTS "T x" ("Na me" VARCHAR(2) DEFAULT \'a\')',
            'CREATE TABLE IF NOT EXISTS "T x" ("Na me" TEXT DEFAULT \'a\' '
            'CHECK (LENGTH("Na me") <= 2))',
        ),
        (  # the user's own CHECK stays, the length one is added after it
            "CREATE TEMP TABLE t (a varchar(3) CHECK (a <> ''))",
            "CREATE TEMPORARY TABLE t (a TEXT CHECK (a <> '') CHECK (LENGTH(a) <= 3))",
        ),
        # char(n) (bare char: char(1)): its length without trailing blanks; an unsized
        # varchar: a CHECK that holds for every value, recording the word
        (
            "CREATE TABLE t (c char(3), b bpchar(2), o char)",
            "CREATE TABLE t (c TEXT CHECK (LENGTH(RTRIM(c, ' ')) <= 3), "
            "b TEXT CHECK (LENGTH(RTRIM(b, ' ')) <= 2), o TEXT CHECK (LENGTH(RTRIM(o, ' ')) <= 1))",
        ),
        ("CREATE TABLE t (g varchar)", "CREATE TABLE t (g TEXT CHECK (LENGTH(g) >= 0))"),
        ("CREATE TABLE t (g text, h bpchar)", "CREATE TABLE t (g TEXT, h TEXT)"),
        # left as before: arrays, ADD COLUMN, generated columns
        ("CREATE TABLE t (h varchar(3)[])", "CREATE TABLE t (h TEXT(3)[])"),
        ("ALTER TABLE t ADD COLUMN v varchar(5)", "ALTER TABLE t ADD COLUMN v TEXT(5)"),
        (
            "CREATE TABLE t (a int, b varchar(5) GENERATED ALWAYS AS (upper(a)) STORED)",
            "CREATE TABLE t (a INT, b TEXT(5) AS (UPPER(a)))",
        ),
        # explicit casts truncate, as in Postgres
        ("SELECT 'abc'::varchar(2)", "SELECT LEFT(CAST('abc' AS TEXT), 2)"),
        (
            "SELECT CAST(x AS character varying(3)) FROM t",
            "SELECT LEFT(CAST(x AS TEXT), 3) FROM t",
        ),
        ("SELECT $1::varchar(4)", "SELECT LEFT(CAST($1 AS TEXT), 4)"),
        (
            "SELECT x::varchar, y::char(2) FROM t",
            "SELECT CAST(x AS TEXT), RPAD(RTRIM(LEFT(CAST(y AS TEXT), 2), ' '), 2, ' ') FROM t",
        ),
        # char(n) cuts to n and drops the trailing blanks bpchar ignores; bare char is char(1);
        # a result column that is the cast is padded to n (cast_types.py)
        ("SELECT 'abc'::char", "SELECT RPAD(RTRIM(LEFT(CAST('abc' AS TEXT), 1), ' '), 1, ' ')"),
        (
            "SELECT CAST(x AS character(3)) AS c",
            "SELECT RPAD(RTRIM(LEFT(CAST(x AS TEXT), 3), ' '), 3, ' ') AS c",
        ),
        ("SELECT upper(x::char(3))", "SELECT UPPER(RTRIM(LEFT(CAST(x AS TEXT), 3), ' '))"),
        ("SELECT x::bpchar", "SELECT CAST(x AS TEXT)"),
        ('SELECT x::"char"', 'SELECT CAST(x AS "char")'),
    ],
)
def test_rewrite(pg: str, duck: str) -> None:
    assert sql(pg) == duck


def test_snowflake_ddl_keeps_the_length_too() -> None:
    assert sql("CREATE TABLE t (a VARCHAR(100))", "snowflake") == (
        "CREATE TABLE t (a TEXT CHECK (LENGTH(a) <= 100))"
    )


def test_cast_keeps_the_postgres_column_name() -> None:
    (st,) = transpile("SELECT 'abc'::varchar(2), 'x'::varchar(1) AS y, 'ab'::char(3)")
    assert st.column_names == ("varchar", None, "bpchar")


def test_duckdb_keeps_and_enforces_the_length() -> None:
    con = duckdb.connect()
    for st in transpile(
        'CREATE TABLE people (id int, name varchar(5), "Odd ""x""" varchar(2), n int CHECK (n > 0))'
    ):
        con.execute(st.sql)
    # The catalog layer reads exactly this shape (proxy/db/catalog/30_relations.sql).
    assert con.execute(
        "SELECT constraint_type, expression, constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = 'people' ORDER BY constraint_index"
    ).fetchall() == [
        ("CHECK", '(length("name") <= 5)', ["name"]),
        ("CHECK", '(length("Odd ""x""") <= 2)', ['Odd "x"']),
        ("CHECK", "(n > 0)", ["n"]),
    ]
    con.execute("INSERT INTO people VALUES (1, 'ééééé', 'ab', 1), (2, NULL, NULL, 2)")
    for text, state, message in [
        ("INSERT INTO people VALUES (3, 'abcdef', NULL, 1)", "22001", "character varying(5)"),
        ("UPDATE people SET name = name || 'x'", "22001", "character varying(5)"),
        ("INSERT INTO people VALUES (3, NULL, 'abc', 1)", "22001", "character varying(2)"),
        ("INSERT INTO people VALUES (3, NULL, NULL, 0)", "23514", "CHECK constraint failed"),
    ]:
        with pytest.raises(duckdb.ConstraintException) as err:
            con.execute(text)
        pg = map_duckdb_error(err.value, text)
        assert (pg.sqlstate, message in pg.message) == (state, True), pg.message
        if state == "22001":
            assert pg.message == f"value too long for type {message}"


def test_duckdb_alter_table_limits() -> None:
    """Why ADD COLUMN keeps no length and ALTER COLUMN TYPE needs a table rebuild
    (proxy/pgserver/alter_rebuild.py; DuckDB's own refusal is 0A000 where no rebuild is done)."""
    con = duckdb.connect()
    con.execute(sql("CREATE TABLE t (name varchar(5))"))
    with pytest.raises(duckdb.ParserException, match="Adding columns with constraints"):
        con.execute("ALTER TABLE t ADD COLUMN v VARCHAR CHECK (length(v) <= 5)")
    with pytest.raises(duckdb.BinderException) as err:
        con.execute(sql("ALTER TABLE t ALTER COLUMN name TYPE varchar(20)"))
    assert map_duckdb_error(err.value).sqlstate == "0A000"
    # RENAME COLUMN rewrites the constraint: the length stays with the column
    con.execute("ALTER TABLE t RENAME COLUMN name TO label")
    assert con.execute("SELECT expression FROM duckdb_constraints()").fetchall() == [
        ('(length("label") <= 5)',)
    ]


def test_without_word_checks_keeps_varchar_n() -> None:
    """A DuckLake keeps no CHECK: the char(n) / varchar ones go, varchar(n)'s stays (it is
    refused there with a hint)."""
    from transpiler import transpile
    from transpiler.varchar_length import without_word_checks

    sql = transpile('CREATE TABLE t (a char(3), b varchar, "Q x" char, n varchar(4))')[0].sql
    assert without_word_checks(sql) == (
        'CREATE TABLE t (a TEXT, b TEXT, "Q x" TEXT, n TEXT CHECK (LENGTH(n) <= 4))'
    )
