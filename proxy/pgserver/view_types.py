"""A view's columns read plainly from a varchar(n) / varchar / char(n) column carry that
type, as PostgreSQL's do (pg_attribute, information_schema.columns, RowDescription of
`SELECT * FROM v`, a CREATE TABLE ... AS over the view).

DuckDB types such a view column VARCHAR and keeps nothing else. At CREATE VIEW the
query's column origins (as for CREATE TABLE ... AS: ctas_lengths.lengths) say which
columns are such references, and `main.__hati_view_types` records their declared types,
in the statement's transaction, with the view's SQL as DuckDB keeps it: the catalog
(30_relations.sql __hati_char_cols) reads a row only while the view still has that SQL,
so a view dropped, replaced or re-made (a renamed table it reads) never shows another
view's types (it shows text until it is created again).
"""

from __future__ import annotations

import logging
from typing import Any

import duckdb

from proxy.pgserver import ctas_lengths

log = logging.getLogger("hatiproxy.view_types")
REGISTRY = "main.__hati_view_types"


def record(
    cur: duckdb.DuckDBPyConnection, schema: str, name: str, found: ctas_lengths.Lengths
) -> None:
    """Write the registry rows of the view `schema.name` just made ('' schema: the
    current one); a replaced view's old rows go."""
    row = cur.execute(
        "SELECT schema_name, sql FROM system.main.duckdb_views() WHERE database_name = "
        "system.main.current_database() AND view_name = ? AND schema_name = "
        "CASE WHEN ? = '' THEN system.main.current_schema() ELSE ? END",
        [name, schema, schema],
    ).fetchone()
    if row is None:
        return
    cur.execute(f"DELETE FROM {REGISTRY} WHERE schema_name = ? AND view_name = ?", [row[0], name])
    for i, (typid, n) in sorted(found.items()):
        cur.execute(
            f"INSERT INTO {REGISTRY} VALUES (?, ?, ?, ?, ?, ?)",
            [row[0], name, row[1], i + 1, typid, n],
        )


async def run(runner: Any, portal: Any, work: Any) -> None:
    """Run a CREATE VIEW (`work`), then record its columns' declared types; best effort:
    the view stands (its columns text) if that fails."""
    failure = "CREATE VIEW kept no declared column types"
    await ctas_lengths.run_then_record(runner, portal, work, record, failure)
