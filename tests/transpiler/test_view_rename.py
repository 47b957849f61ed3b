"""transpiler/view_rename.py, transpiler/drop_column.py, table_ddl.without_columns and the
`*` of view_deps.with_column_renamed: the pure parts of view renames and DROP COLUMN
rebuilds."""

from __future__ import annotations

import pytest

from transpiler import table_ddl
from transpiler.drop_column import DropColumns, dropped_columns
from transpiler.view_deps import with_column_renamed
from transpiler.view_rename import ViewRename, parse, with_columns


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("ALTER VIEW v RENAME COLUMN a TO b", ViewRename("v", None, "a", "b", False, False)),
        ('ALTER VIEW IF EXISTS s.v RENAME "A" TO b;', ViewRename("v", "s", "A", "b", True, False)),
        ("ALTER VIEW v RENAME TO w", ViewRename("v", None, None, "w", False, False)),
        ("ALTER TABLE v RENAME COLUMN a TO b", ViewRename("v", None, "a", "b", False, True)),
        ("ALTER TABLE t RENAME CONSTRAINT a TO b", None),
        ("ALTER VIEW v SET SCHEMA s", None),
        ("ALTER VIEW v RENAME TO s.x", None),
    ],
)  # fmt: skip
def test_parse(sql: str, want: ViewRename | None) -> None:
    assert parse(sql) == want


def test_with_columns_aliases_the_select_list_or_names_the_columns() -> None:
    old, new = ["id", "b"], ["id", "c"]
    assert with_columns("CREATE VIEW v AS SELECT id, b FROM t;", old, new, "db", "main") == (
        'CREATE OR REPLACE VIEW "db"."main".v AS SELECT id, b AS "c" FROM t'
    )
    assert with_columns("CREATE VIEW v AS SELECT * FROM t;", old, new, "db", "s") == (
        'CREATE OR REPLACE VIEW "db"."s".v AS SELECT "id", "b" AS "c" FROM t'
    )
    assert with_columns("CREATE VIEW v AS SELECT * FROM t, u;", old, new, "db", "s") == (
        'CREATE OR REPLACE VIEW "db"."s".v ("id", "c") AS SELECT * FROM t, u'
    )


def test_a_star_is_written_out_keeping_the_old_name() -> None:
    sql = "CREATE VIEW w AS SELECT * FROM v WHERE b > 1;"
    assert with_column_renamed(sql, "v", "b", "c", ["id", "b"]) == (
        'CREATE OR REPLACE VIEW w AS SELECT "id", "c" AS "b" FROM v WHERE "c" > 1'
    )
    star = "CREATE VIEW w AS SELECT * FROM v;"
    assert with_column_renamed(star, "v", "b", "c", []) is None  # (not told its columns)
    assert with_column_renamed("CREATE VIEW w AS SELECT * FROM x;", "v", "b", "c", ["b"]) is None


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ('ALTER TABLE "t" DROP COLUMN "a" CASCADE', DropColumns(None, "t", ("a",), False)),
        ("ALTER TABLE s.t DROP COLUMN a, DROP COLUMN IF EXISTS b", DropColumns("s", "t", ("a", "b"), True)),
        ("ALTER TABLE IF EXISTS t DROP COLUMN a", None),
        ("ALTER TABLE t RENAME TO u", None),
    ],
)  # fmt: skip
def test_dropped_columns(sql: str, want: DropColumns | None) -> None:
    assert dropped_columns(sql) == want


def test_without_columns_drops_the_constraints_naming_them() -> None:
    ddl = table_ddl.parse(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b INTEGER, c INTEGER, "
        "UNIQUE(b, c), CHECK((c > a)), CHECK((c > 0)));"
    )
    assert ddl is not None
    out, gone = table_ddl.without_columns(ddl, frozenset({"b"}))
    assert [c.name for c in out.columns] == ["a", "c"]
    assert out.constraints == ("CHECK((c > a))", "CHECK((c > 0))")
    assert gone == ("UNIQUE(b, c)",)
