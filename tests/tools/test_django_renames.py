"""Django 5.2's RenameField, AlterField (null, type, max_length of a UNIQUE column),
RenameModel (with a ForeignKey onto it) and RemoveField (a column a view reads: Django's
DROP COLUMN ... CASCADE drops the view) on a table with rows, run by `migrate` forwards,
back to 0001 and forwards again (tests/tools/django_renames_script.py), against
PostgreSQL 15 and hatiproxy: after each step the rows, columns, indexes, keys and the
view's rows are PostgreSQL's, and Django sends the same SQL to both."""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("django_renames_script.py")


def _as_hatiproxy_declares(columns: list[list]) -> list[list]:
    """A view's column over a varchar(n) column keeps its type until the server rewrites the
    view for a rename of what it reads; then it is text (docs/compatibility.md)."""
    return [
        [t, c, "text", None, n] if t == "ren_names" and kind == "character varying" else
        [t, c, kind, size, n]
        for t, c, kind, size, n in columns
    ]  # fmt: skip


def test_renames_alters_and_removes_as_postgres(tmp_path: Path) -> None:
    pg, hati = run_on_postgres_and_hatiproxy(
        "django", SCRIPT, tmp_path, lambda host, port, user, db: [host, str(port), user, db]
    )
    labels = [step["label"] for step in pg["steps"]]
    assert labels == [
        f"migrate {n}" for n in ("0002", "0003", "0004", "0005", "0006", "0001", "0006")
    ]
    assert all("error" not in step for step in pg["steps"]), pg["steps"][-1]
    for i, (want, got) in enumerate(zip(pg["steps"], hati["steps"], strict=True)):
        if i > 0:  # after 0003's RenameField the view was rewritten
            want = {**want, "columns": _as_hatiproxy_declares(want["columns"])}
        assert got == want, want["label"]
    assert hati["sql"] == pg["sql"]  # Django read the same catalog and chose the same DDL
    renamed = pg["steps"][1]
    assert renamed["ren_item"][1] == [2, "pear", 5, None, "p1"]
    assert ["ren_item", "title", "character varying", 20, "NO"] in renamed["columns"]
    assert renamed["view"][1] == [2, "pear", None]  # the view follows the rename
    removed = pg["steps"][4]
    assert removed["ren_product"] == [[1, "apple", "a1"], [2, "pear", "p1"], [3, "fig", "f1"]]
    assert removed["view"][0] == "ProgrammingError"  # dropped with note (CASCADE)
    assert ["ren_product", "UNIQUE", "code"] in removed["keys"]
