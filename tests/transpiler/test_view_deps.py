"""transpiler/view_deps.py: the columns an ALTER drops (with CASCADE apart), which views
read a relation, and a view's SQL rewritten for its table's rename."""

from __future__ import annotations

from transpiler.view_deps import (
    altered_columns,
    reads_relation,
    with_column_renamed,
    with_table_renamed,
)


def test_altered_columns_cascade_apart() -> None:
    a = altered_columns("ALTER TABLE s.t DROP COLUMN a CASCADE, DROP COLUMN b")
    assert a is not None
    assert (a.schema, a.table, a.dropped, a.cascaded) == ("s", "t", ("b",), ("a",))
    assert altered_columns("ALTER TABLE t ADD COLUMN c int") is None


def test_reads_relation() -> None:
    assert reads_relation("CREATE VIEW w AS SELECT b FROM v", "V")
    assert not reads_relation("CREATE VIEW w AS SELECT b FROM vv", "v")


def test_with_table_renamed() -> None:
    sql = "CREATE VIEW v AS SELECT t.b FROM t JOIN u ON t.id = u.id;"
    got = with_table_renamed(sql, "t", "t2")
    assert got == 'CREATE OR REPLACE VIEW v AS SELECT "t2".b FROM "t2" JOIN u ON "t2".id = u.id'
    assert with_table_renamed("CREATE VIEW v AS SELECT b FROM u", "t", "t2") is None
    assert with_table_renamed("CREATE VIEW v AS SELECT b FROM other.t", "t", "t2") is None
    assert with_table_renamed("CREATE VIEW v AS SELECT b FROM s.t", "t", "t2", "s") is not None


def test_with_table_moved() -> None:
    got = with_table_renamed("CREATE VIEW v AS SELECT b FROM t", "t", "t", "main", "s")
    assert got == 'CREATE OR REPLACE VIEW v AS SELECT b FROM "s"."t"'


def test_with_column_renamed() -> None:
    sql = "CREATE VIEW v AS SELECT b, t.id + 1 AS x FROM t WHERE b > 0;"
    got = with_column_renamed(sql, "t", "b", "bb")
    assert (
        got == 'CREATE OR REPLACE VIEW v AS SELECT "bb" AS "b", t.id + 1 AS x FROM t WHERE "bb" > 0'
    )
    assert with_column_renamed("CREATE VIEW v AS SELECT id FROM t", "t", "b", "bb") is None
