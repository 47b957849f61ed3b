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
