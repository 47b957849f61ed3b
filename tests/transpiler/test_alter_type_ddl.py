"""The pure halves of the ALTER COLUMN TYPE rebuild: what a statement asks
(transpiler/alter_type.py) and DuckDB's table DDL re-made with new types
(transpiler/table_ddl.py), checked against DuckDB itself."""

from __future__ import annotations

import duckdb

from transpiler import table_ddl, transpile
from transpiler.alter_type import TypeChange


def _request(sql: str):
    (st,) = transpile(sql)
    return st.alter_types


def test_requests_read_off_postgres_statements() -> None:
    request = _request(
        'ALTER TABLE IF EXISTS public."T" ALTER COLUMN "Name" TYPE character varying(20) '
        'USING "Name"::varchar(10), ALTER code SET DATA TYPE char(4), ALTER n TYPE numeric(10,2), '
        "ALTER \"Name\" SET DEFAULT 'x', ALTER n DROP DEFAULT, ALTER n SET NOT NULL, "
        "ALTER code DROP NOT NULL"
    )
    assert request is not None
    assert (request.catalog, request.schema, request.table, request.if_exists) == (
        None,
        "main",
        "T",
        True,
    )
    assert request.changes == (
        # varchar(n): VARCHAR plus a length; the USING cast truncates, as in Postgres
        TypeChange("Name", "VARCHAR", 20, 'LEFT(CAST("Name" AS TEXT), 10)', None),
        TypeChange("code", "TEXT(4)", None, None, None),  # char(n) is text here
        TypeChange("n", "DECIMAL(10, 2)", None, None, None),
    )
    assert request.others == (
        "ALTER COLUMN \"Name\" SET DEFAULT 'x'",
        'ALTER COLUMN "n" DROP DEFAULT',
        'ALTER COLUMN "n" SET NOT NULL',
        'ALTER COLUMN "code" DROP NOT NULL',
    )


def test_other_alter_statements_are_not_requests() -> None:
    for sql in (
        "ALTER TABLE t ADD COLUMN x int",
        "ALTER TABLE t ALTER COLUMN c SET DEFAULT 1",
        "ALTER TABLE t ALTER c TYPE int, ADD COLUMN x int",
        "ALTER TABLE t RENAME COLUMN a TO b",
        "EXPLAIN ALTER TABLE t ALTER c TYPE varchar(3)",
    ):
        assert _request(sql) is None, sql


def test_ddl_round_trip_through_duckdb() -> None:
    con = duckdb.connect()
    con.execute("CREATE SEQUENCE seq")
    con.execute(
        "CREATE TABLE \"Odd, T\" (id int DEFAULT nextval('seq') PRIMARY KEY, "
        "\"Na,me\" VARCHAR COLLATE nocase NOT NULL DEFAULT 'x''y' CHECK (length(\"Na,me\") <= 5), "
        'g int GENERATED ALWAYS AS (id * 2), st STRUCT(a int, "b c" varchar), '
        "ts timestamptz DEFAULT now(), d decimal(10,2), UNIQUE (d, ts), CHECK (d > 0))"
    )
    (ddl,) = con.execute("SELECT sql FROM duckdb_tables()").fetchone()
    table = table_ddl.parse(ddl)
    assert table is not None
    assert [(c.name, c.type_sql, c.generated) for c in table.columns] == [
        ("id", "INTEGER", False),
        ("Na,me", "VARCHAR", False),
        ("g", "INTEGER", True),
        ("st", 'STRUCT(a INTEGER, "b c" VARCHAR)', False),
        ("ts", "TIMESTAMP WITH TIME ZONE", False),
        ("d", "DECIMAL(10,2)", False),
    ]
    new = table_ddl.render(
        table,
        '"Odd, T 2"',
        {"na,me": ("VARCHAR", None), "d": ("DECIMAL(12,3)", None)},
        frozenset({'CHECK((length("Na,me") <= 5))'}),
        ('CHECK((length("Na,me") <= 9))',),
    )
    con.execute(new)
    (made,) = con.execute(
        "SELECT sql FROM duckdb_tables() WHERE table_name = 'Odd, T 2'"
    ).fetchone()
    # Only the asked-for parts changed (the collation goes with the old type, as in PG)
    assert made == (
        "CREATE TABLE \"Odd, T 2\"(id INTEGER DEFAULT(nextval('seq')) PRIMARY KEY, "
        "\"Na,me\" VARCHAR DEFAULT('x''y') NOT NULL, g INTEGER GENERATED ALWAYS AS((id * 2)), "
        'st STRUCT(a INTEGER, "b c" VARCHAR), ts TIMESTAMP WITH TIME ZONE DEFAULT(now()), '
        'd DECIMAL(12,3), UNIQUE(d, ts), CHECK((d > 0)), CHECK((length("Na,me") <= 9)));'
    )


def test_index_made_to_name_the_rebuilt_table() -> None:
    qualified = '"db"."s"."My T"'
    assert (
        table_ddl.index_on('CREATE INDEX "I x" ON s."My T"((lower(v)), d);', qualified)
        == 'CREATE INDEX "I x" ON "db"."s"."My T"((lower(v)), d)'
    )
    assert (
        table_ddl.index_on("CREATE INDEX h ON docs USING HNSW (vec);", qualified)
        == 'CREATE INDEX h ON "db"."s"."My T" USING HNSW (vec)'
    )
    assert table_ddl.index_on("not an index", qualified) is None
