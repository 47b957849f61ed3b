"""Merging a branch into main: "tables touched by a merge end up exactly as the strategy says".

The touched tables are the base tables of the branch schema: copies made by copy-on-write and
tables created in the branch. Tables still views (never written) are not touched: main keeps
whatever it has now. Views and other objects created in a branch are not merged. Columns are
matched by name; only columns present in both tables are written (schema changes made in the
branch are not merged); a branch-created table is created in main with the branch's DDL.
Everything happens in ONE transaction (all tables or none), then the branch schema is dropped
and the status becomes `merged`.

- `branch_wins`: for each touched table that exists in main, `DELETE FROM main.t` then
  `INSERT INTO main.t SELECT ... FROM branch.t`: main's table ends up with exactly the branch's
  rows (rows deleted or updated in the branch are deleted / updated in main; rows inserted or
  changed in main after branching are lost). main's table object, constraints and indexes stay.
- `main_wins`: main's existing rows never change and nothing is deleted. For a table with a
  PRIMARY KEY in main, the branch rows whose key is not in main are inserted (rows updated or
  deleted in the branch whose key main still has are ignored; a key main deleted after
  branching comes back if the branch still has it). For a table without a primary key, the
  distinct branch rows not already present in main (`branch EXCEPT main`, NULLs equal) are
  inserted, so a row updated in the branch arrives as an additional row.
- Both: a table created in the branch that main lacks is created in main with all its rows.
  Any constraint violation (e.g. a UNIQUE column in main_wins) fails the whole merge with
  nothing changed; the branch stays active.
"""

from __future__ import annotations

import duckdb

from proxy.agent.base import AgentError
from proxy.agent.branch_copy import (
    _TMP_PREFIX,
    _base_tables,
    _columns,
    _copy_table,
    _primary_key,
    _q,
)

STRATEGIES = ("branch_wins", "main_wins")


def _merge_tables(cur: duckdb.DuckDBPyConnection, schema: str, strategy: str) -> list[dict]:
    """Apply `strategy` for every base table of the branch (see the module docstring)."""
    report: list[dict] = []
    main_tables = _base_tables(cur, "main")
    qs = _q(schema)
    for low, table in sorted(_base_tables(cur, schema).items()):
        if low.startswith(_TMP_PREFIX) or low.startswith("_hatidata"):
            continue  # an interrupted copy's leftover, or a snapshot (branch_stats): not data
        src = f"{qs}.{_q(table)}"
        if low not in main_tables:
            kept = _copy_table(cur, schema, table, "main", table)
            n = cur.execute(f"SELECT count(*) FROM main.{_q(table)}").fetchone()[0]
            report.append({"table": table, "action": "created", "rows_inserted": n, "kept": kept})
            continue
        main_name = main_tables[low]
        dst = f"main.{_q(main_name)}"
        branch_cols = {c.lower() for c in _columns(cur, schema, table)}
        common = [c for c in _columns(cur, "main", main_name) if c.lower() in branch_cols]
        if not common:
            raise AgentError.conflict(f"{table}: the branch and main share no column")
        cols = ", ".join(_q(c) for c in common)
        if strategy == "branch_wins":
            deleted = cur.execute(f"DELETE FROM {dst}").fetchone()[0]
            inserted = cur.execute(f"INSERT INTO {dst} ({cols}) SELECT {cols} FROM {src}")
            report.append(
                {
                    "table": main_name,
                    "action": "replaced",
                    "rows_deleted": int(deleted),
                    "rows_inserted": int(inserted.fetchone()[0]),
                }
            )
            continue
        pk = _primary_key(cur, "main", main_name)
        if pk:
            if any(p.lower() not in branch_cols for p in pk):
                raise AgentError.conflict(f"{table}: the branch lacks main's primary key columns")
            match = " AND ".join(f"m.{_q(p)} = b.{_q(p)}" for p in pk)
            sel = ", ".join(f"b.{_q(c)}" for c in common)
            sql = (
                f"INSERT INTO {dst} ({cols}) SELECT {sel} FROM {src} b "
                f"WHERE NOT EXISTS (SELECT 1 FROM {dst} m WHERE {match})"
            )
        else:
            sql = (
                f"INSERT INTO {dst} ({cols}) "
                f"SELECT {cols} FROM {src} EXCEPT SELECT {cols} FROM {dst}"
            )
        inserted = cur.execute(sql).fetchone()[0]
        report.append(
            {
                "table": main_name,
                "action": "inserted_missing",
                "key": pk or None,
                "rows_inserted": int(inserted),
            }
        )
    return report
