"""infer_param_types."""

from __future__ import annotations

from transpiler import infer_param_types, transpile

COLUMNS = {
    ("t", "id"): "INTEGER",
    ("t", "name"): "VARCHAR",
    ("t", "ts"): "TIMESTAMP",
    ("u", "x"): "DOUBLE",
    ("t", "tags"): "VARCHAR[]",
}


def column_type(schema: str | None, table: str, column: str) -> str | None:
    return COLUMNS.get((table, column))


def table_columns(schema: str | None, table: str) -> list[tuple[str, str]] | None:
    return [("id", "INTEGER"), ("name", "VARCHAR")] if table == "t" else None


def infer(sql: str) -> dict[int, str]:
    return infer_param_types(transpile(sql)[0], column_type, table_columns)


def test_comparisons_between_in_limit() -> None:
    got = infer(
        "SELECT * FROM t a JOIN u ON a.id = $1 WHERE name LIKE $2 AND x BETWEEN $3 AND $4 "
        "AND a.ts >= $7 LIMIT $5 OFFSET $6"
    )
    assert got == {
        1: "INTEGER",
        2: "VARCHAR",
        3: "DOUBLE",
        4: "DOUBLE",
        5: "BIGINT",
        6: "BIGINT",
        7: "TIMESTAMP",
    }


def test_insert_with_and_without_column_list() -> None:
    assert infer("INSERT INTO t (name, id) VALUES ($1, $2)") == {1: "VARCHAR", 2: "INTEGER"}
    assert infer("INSERT INTO t VALUES ($1, $2)") == {1: "INTEGER", 2: "VARCHAR"}


def test_update_cast_arithmetic_and_embed() -> None:
    assert infer("UPDATE t SET name = $1 WHERE id IN ($2, $3)") == {
        1: "VARCHAR",
        2: "INTEGER",
        3: "INTEGER",
    }
    assert infer("SELECT $1::bigint, x + $2 FROM u") == {1: "BIGINT", 2: "DOUBLE"}
    assert infer("SELECT * FROM t WHERE semantic_match(embedding, $1)") == {1: "VARCHAR"}


def test_operator_with_a_cast_or_a_number_types_the_other_side() -> None:
    """PostgreSQL resolves `unknown op known` with the known side's type; postgres.js
    sends a JS number as unknown (`${5}::int + ${2}`) and encodes it by the answer."""
    assert infer("SELECT $1::int + $2, $3 * 2, 1.5 < $4, ($5::bigint) - $6") == {
        1: "INT", 2: "INT", 3: "INTEGER", 4: "NUMERIC", 5: "BIGINT", 6: "BIGINT",
    }  # fmt: skip
    assert infer("SELECT $1 || 'y', $2 = 'a'") == {}  # a string literal is unknown too
    # arithmetic over known operands promotes as PostgreSQL does (pgx's `$1::int8 * 100 + $2`)
    assert infer("SELECT $1::int8 * 100 + $2, (2 + 1.5) * $3, $4 + ($5::text || 'x')") == {
        1: "BIGINT", 2: "BIGINT", 3: "NUMERIC", 5: "TEXT",
    }  # fmt: skip


def test_coalesce_operand_types_the_other_side() -> None:
    """ActiveRecord's update_counters: `SET n = COALESCE(n, 0) + $1` (PostgreSQL: int)."""
    assert infer("UPDATE t SET id = COALESCE(id, 0) + $1 WHERE name = $2") == {
        1: "INTEGER", 2: "VARCHAR",
    }  # fmt: skip
    assert infer("SELECT COALESCE(NULL, x, 1) * $1 FROM u") == {1: "DOUBLE"}
    assert infer("SELECT COALESCE(NULL, 'a') || $1") == {}


def test_unknown_params_are_left_out() -> None:
    assert infer("SELECT $1, unknown_col = $2 FROM nowhere") == {}
    assert infer("SELECT 1") == {}


def test_array_operators_type_the_other_side_as_the_array() -> None:
    """Prisma sends `tags @> $1` ({ has: x }) and `SET tags = tags || $1` ({ push: x })
    with the array as untyped text ('{sf}'): PostgreSQL types it as the column's array."""
    assert infer("SELECT id FROM t WHERE tags @> $1 OR tags && $2 OR tags <@ $3") == {
        1: "VARCHAR[]", 2: "VARCHAR[]", 3: "VARCHAR[]",
    }  # fmt: skip
    assert infer("SELECT tags || $1, name || $2 FROM t") == {1: "VARCHAR[]", 2: "VARCHAR"}
    # written to an array column, `||` is list_concat (array_text): still typed
    assert infer("SELECT list_concat(tags, $1) FROM t") == {1: "VARCHAR[]"}


def test_aggregate_comparisons_take_postgresql_result_types() -> None:
    """`HAVING COUNT(x) >= $1` (Tortoise's annotate().filter()): $1 is int8, as
    PostgreSQL types count(); sum(int4) is int8, avg(int4) numeric, max(x) x's type."""
    got = infer(
        "SELECT 1 FROM t JOIN u ON true GROUP BY t.name HAVING COUNT(u.x) >= $1 "
        "AND SUM(t.id) > $2 AND AVG(t.id) < $3 AND MAX(t.ts) = $4 AND SUM(u.x) <> $5 "
        "AND count(*) = $6 AND min(t.name) = $7 AND SUM(DISTINCT t.id) = $8"
    )
    assert got == {
        1: "BIGINT",
        2: "BIGINT",
        3: "NUMERIC",
        4: "TIMESTAMP",
        5: "DOUBLE",
        6: "BIGINT",
        7: "VARCHAR",
    }


def test_common_type_functions_and_function_results() -> None:
    """`COALESCE(price, $1)` (Tortoise's Coalesce), GREATEST / LEAST / NULLIF and CASE
    branches: the unknown takes a known sibling's type; `array_length(a, $1) = $2`
    (Tortoise's `__len`) and `length(x) = $n` are int4, as PostgreSQL resolves them."""
    got = infer(
        "SELECT COALESCE(x, $1), GREATEST(x, $2), NULLIF(t.id, $3), "
        "CASE WHEN t.id > 1 THEN ts ELSE $4 END, CASE WHEN t.id > 2 THEN $5 ELSE name END "
        "FROM t JOIN u ON true WHERE length(name) = $6 AND array_length(tags, $7) = $8 "
        "AND COALESCE(t.id, 0) = $9 AND CASE WHEN t.id > 0 THEN $10 ELSE 1 END = 1"
    )
    assert got == {
        1: "DOUBLE",
        2: "DOUBLE",
        3: "INTEGER",
        4: "TIMESTAMP",
        5: "VARCHAR",
        6: "INTEGER",
        7: "INTEGER",
        8: "INTEGER",
        9: "INTEGER",
        10: "INTEGER",
    }


def test_json_path_operand_is_a_text_array() -> None:
    """`doc #> $1` / `#>>` (Piccolo's from_path): PostgreSQL types the path text[]."""
    assert infer("SELECT name #> $1, name #>> $2 FROM t WHERE id = $3") == {
        1: "VARCHAR[]",
        2: "VARCHAR[]",
        3: "INTEGER",
    }
