"""ActiveRecord 6.1's rename_column, change_column (a string limit, integer to bigint),
change_column_null with a default for NULLs, rename_table (its key's sequence and indexes
follow) and remove_column (an indexed column, one before a unique column) on a table with
rows and a view over it, migrated up, down to the first migration and up again
(tests/tools/activerecord_renames_script.rb), against PostgreSQL 15 and hatiproxy: after
each step the rows, ActiveRecord's columns / indexes / primary key and sequence, and the
view's rows are PostgreSQL's."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("activerecord_renames_script.rb")


def test_rails_renames_as_postgres(tmp_path: Path) -> None:
    ruby = shutil.which("ruby")
    assert ruby is not None, "ruby is missing: apt-get install ruby ruby-activerecord ruby-pg"
    theirs, ours = run_on_postgres_and_hatiproxy(
        "ruby", SCRIPT, tmp_path, lambda h, p, u, d: [str(SCRIPT), h, str(p), u, d],
        binary=Path(ruby),
    )  # fmt: skip
    assert [s["label"] for s in theirs["steps"]] == [
        *(f"up 2024020100000{n}" for n in range(1, 6)), "down 20240201000001", "up ",
    ]  # fmt: skip
    assert all("error" not in s for s in theirs["steps"]), theirs["steps"][-1]
    for want, got in zip(theirs["steps"], ours["steps"], strict=True):
        assert got == want, want["label"]
    assert ours["after"] == theirs["after"]  # the renamed table's sequence counts on
    renamed = theirs["steps"][3]
    assert renamed["ar_rn_goods_pk"] == ["id", "public.ar_rn_goods_id_seq"]
    assert renamed["view"] == [[1, "apple"], [2, "pear"], [3, "fig"]]  # followed both renames
    assert theirs["steps"][4]["ar_rn_goods_indexes"] == [
        ["index_ar_rn_goods_on_code", ["code"], True]
    ]
