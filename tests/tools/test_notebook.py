"""A Jupyter notebook with JupySQL 0.11 (.ci/tools/notebook.txt: jupysql, ipykernel,
nbclient, SQLAlchemy 2 over psycopg2, pandas, matplotlib), executed cell by cell by a real
IPython kernel through nbclient (tests/tools/notebook_script.py), against a real server
and against PostgreSQL 15: the same outputs.

The cells: `%sql postgresql+psycopg2://...`, a `%%sql` cell of DDL and a multi-row INSERT,
`%sql` results as a pandas DataFrame, `{{variable}}` templating, `%%sql --save` snippets
composed into a CTE, `%sqlcmd tables` / `columns` (SQLAlchemy's inspector) / `profile`
(its per-column count, unique, top, freq, mean, std and quantile queries), `%sql
--persist-replace` of a DataFrame (pandas' to_sql), `%sqlplot histogram` and `boxplot`
(the bins and quartiles computed in SQL), and an error raised for a missing table."""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("notebook_script.py")


def test_jupysql_notebook_answers_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "notebook", SCRIPT, tmp_path, lambda host, port, user, db: [host, str(port), user, db]
    )
    assert theirs["totals"] == [
        ["east", "45.10", 1],
        ["north", "580.75", 3],
        ["south", "160.00", 2],
    ]
    assert theirs["saved_cte"] == [["north", 3]]
    # every column's most frequent value is one value (ties would be in any order)
    assert "|  top   |  nan   | north  | 80.00  | 2026-02-10 | big" in theirs["profile"]
    assert theirs["tables"] is True and theirs["error"] is True
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
