"""Postgres result column names for unnamed expressions (FigureColname, simplified)."""

import pytest

from transpiler import transpile


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT count(*) FROM t", ("count",)),
        ("SELECT version()", ("version",)),
        ("SELECT 1 + 1, a, b AS c FROM t", ("?column?", None, None)),
        ("SELECT lower(name), x::text, '1'::int FROM t", ("lower", "x", "int4")),
        ("SELECT row_number() OVER (), CASE WHEN a THEN 1 END FROM t", ("row_number", "case")),
        ("SELECT (SELECT max(a) FROM t)", ("max",)),
        ("SELECT semantic_rank(content, 'x') FROM t", ("semantic_rank",)),
        ("SELECT count(*) FROM a UNION SELECT 1", ("count",)),
        # sqlglot's own nodes for these; PostgreSQL names them after the function
        ("SELECT array_length(a, 1), cardinality(a) FROM t", ("array_length", "cardinality")),
        ("SELECT generate_series(1, 3), unnest(ARRAY[1])", ("generate_series", "unnest")),
    ],
)
def test_postgres_names(sql: str, names: tuple) -> None:
    assert transpile(sql)[0].column_names == names


@pytest.mark.parametrize("sql", ["SELECT * FROM t", "SELECT a, b FROM t", "SELECT t.*, 1 FROM t"])
def test_nothing_to_rename(sql: str) -> None:
    assert transpile(sql)[0].column_names is None


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        # Prisma reads an enum back as `"t"."role"::text` and the row by column name
        (
            'INSERT INTO t (a) VALUES (1) RETURNING "public"."t"."id", "public"."t"."role"::text',
            (None, "role"),
        ),
        ("UPDATE t SET a = 1 RETURNING a * 2, upper(b), c AS d", ("?column?", "upper", None)),
        ("DELETE FROM t RETURNING t.role::text", ("role",)),
    ],
)
def test_returning_names(sql: str, names: tuple) -> None:
    assert transpile(sql)[0].column_names == names


def test_returning_star_or_plain_columns_renames_nothing() -> None:
    assert transpile("DELETE FROM t RETURNING *")[0].column_names is None
    assert transpile("INSERT INTO t VALUES (1) RETURNING id, t.a")[0].column_names is None
    assert transpile("INSERT INTO t VALUES (1)")[0].column_names is None


def test_jsonb_comparison_keeps_a_qualified_column_mapped_to_main() -> None:
    """Prisma's JSON path filter: `("public"."t"."c" #> path)::jsonb = $2`; the rewritten
    comparison must still name schema main (DuckDB has no schema public)."""
    sql = transpile(
        'SELECT "public"."t"."id" FROM "public"."t" '
        'WHERE ("public"."t"."profile" #> ARRAY[$1]::text[])::jsonb = $2'
    )[0].sql
    assert '"public"' not in sql and '"main"."t"."profile"' in sql
