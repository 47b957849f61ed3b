"""Result columns renamed as PostgreSQL names them, once per statement and columns."""

from proxy.pgserver.result_shape import postgres_names
from proxy.pgserver.results import Column
from transpiler import transpile


def test_a_repeated_statement_gets_the_same_renamed_columns() -> None:
    st = transpile("SELECT count(*), j FROM t")[0]
    cols = (Column("count_star()", "BIGINT"), Column("j", "JSON"))
    first = postgres_names(st, cols)
    assert first == (Column("count", "BIGINT"), Column("j", "JSONB"))
    assert postgres_names(st, cols) is first  # no new columns for a repeat
    # Other columns (DuckDB described the result anew) are renamed anew.
    other = (Column("count_star()", "INTEGER"), Column("j", "VARCHAR"))
    assert postgres_names(st, other) == (Column("count", "INTEGER"), Column("j", "VARCHAR"))
    assert postgres_names(st, None) is None
