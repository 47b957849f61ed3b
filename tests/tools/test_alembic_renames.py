"""Alembic 1.16's alter_column(new_column_name=...) (PostgreSQL's `RENAME a TO b`, no
COLUMN word), alter_column(type_=, nullable=), rename_table and drop_column (a uniquely
indexed column, one before a UNIQUE column) and their inverses, each in a transaction as a
revision runs, on a table with rows and a view over it (tests/tools/alembic_renames_script.py),
against PostgreSQL 15 and hatiproxy: after each step the rows, SQLAlchemy's reflection
(columns, indexes, unique constraints, primary key) and the view's rows are PostgreSQL's,
and the same SQL was sent."""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("alembic_renames_script.py")


def test_alembic_renames_as_postgres(tmp_path: Path) -> None:
    pg, hati = run_on_postgres_and_hatiproxy(
        "alembic", SCRIPT, tmp_path, lambda host, port, user, db: [host, str(port), user, db]
    )
    assert all("error" not in s for s in pg["steps"]), pg["steps"][-1]
    assert len(pg["steps"]) == 9
    for want, got in zip(pg["steps"], hati["steps"], strict=True):
        assert got == want, want["label"]
    assert hati["sql"] == pg["sql"]
    renamed = pg["steps"][1]
    assert renamed["al_rn_items_columns"][1] == ["title", "VARCHAR(20)", False]
    assert renamed["view"] == [[1, "apple"], [2, "pear"], [3, "fig"]]
    dropped = pg["steps"][4]
    assert dropped["al_rn_goods"] == [[1, "apple", "a"], [2, "pear", "p"], [3, "fig", "f"]]
    assert dropped["al_rn_goods_unique"] == [["uq_al_rn_code", ["code"]]]
