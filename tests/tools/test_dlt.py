"""dlt 1.31 (.ci/tools/dlt.txt) with destination "postgres" (psycopg2) run by
tests/tools/dlt_script.py against PostgreSQL 15 and against a real hatiproxy server: a list
of dicts with nested lists (child tables `orders__items`, `orders__items__tags`), the write
dispositions append, replace and merge (delete-insert with a primary key, run twice; the
"upsert" strategy, one MERGE statement; scd2), an incremental resource, a new field on a
second run (ALTER TABLE ADD COLUMN), the csv loader (COPY FROM STDIN with FORCE_NULL), the
rows read back and dlt's `_dlt_loads` / `_dlt_version` / `_dlt_pipeline_state`, a pipeline
restored from the destination (`sync_destination`), `pipeline.dataset()` queries.

dlt connects with `options=-c search_path=shop` before the schema `shop` exists (PostgreSQL
accepts such a path). Its unsized `varchar` columns are `character varying` in
information_schema, as on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("dlt_script.py")


def test_dlt_pipelines_load_as_into_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "dlt",
        SCRIPT,
        tmp_path,
        lambda host, port, user, db: [
            f"postgresql://{user}:secret@{host}:{port}/{db}",
            str(tmp_path / f"pipelines-{port}"),
        ],
    )
    assert "error" not in theirs and "error" not in ours, ours.get("traceback")
    # What the script checks, as PostgreSQL answers it.
    assert theirs["merge"] == [[1, "ann", 30], [2, "bobby", 41], [3, "cy", 50]]
    assert theirs["upsert"] == [[1, 5], [2, 60], [3, 7]]
    assert theirs["scd2"] == [[1, "a", True], [2, "b", False], [2, "B", True]]
    assert theirs["replace"] == [[3, "three"]]
    assert [row[0] for row in theirs["incremental"]] == [1, 2, 3, 4, 5]
    assert theirs["copy"] == [[1, 'say "hi", then\ttab', "2024-02-03"], [2, None, None]]
    assert theirs["orders_items_tags"] == [["x", 0], ["y", 1]]
    assert theirs["dataset"] == [[1, "ann"], [2, "bobby"], [3, "cy"]]
    assert "_dlt_pipeline_state" in [t[0] for t in theirs["tables"]]
    varchar = {"a", "_dlt_load_id", "_dlt_id"}
    assert [c for c in theirs["evolve_columns"] if c[0] in varchar] == [
        ["a", "character varying", "YES"],
        ["_dlt_load_id", "character varying", "NO"],
        ["_dlt_id", "character varying", "NO"],
    ]
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
