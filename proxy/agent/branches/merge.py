"""Merging a branch into main: "tables touched by a merge end up exactly as the strategy says".

The touched tables are the base tables of the branch schema: copies made by copy-on-write and
tables created in the branch. Tables still views (never written) are not touched: main keeps
whatever it has now. Views and other objects created in a branch are not merged. Columns are
matched by name; only columns present in both tables are written (schema changes made in the
branch are not merged; generated columns are computed, not written); a branch-created table
is created in main with the branch's DDL and constraints. Everything happens in ONE
transaction (all tables or none), then the branch schema is dropped and the status becomes
`merged`. Tables are written referenced-first (foreign keys).

- `branch_wins`: for each touched table that exists in main, main's table ends up with
  exactly the branch's rows (rows deleted or updated in the branch are deleted / updated in
  main; rows inserted or changed in main after branching are lost): `DELETE FROM main.t` then
  `INSERT ... SELECT` from the branch; main's table object, constraints and indexes stay.
  A table other tables of main reference by FOREIGN KEY is rebuilt instead: DuckDB cannot
  delete a referenced row in the transaction that deleted its referencing rows (branch_fk),
  so such a table and every table referencing it (at any distance) are dropped and created
  again from main's own DDL (constraints, indexes and comments re-applied), then filled:
  touched ones with the branch's rows, the others with their own rows. A row of main left
  pointing at a key the branch deleted fails the merge (23503), as it would in main.
- `main_wins`: main's existing rows never change and nothing is deleted. For a table with a
  PRIMARY KEY in main, the branch rows whose key is not in main are inserted (rows updated or
  deleted in the branch whose key main still has are ignored; a key main deleted after
  branching comes back if the branch still has it). For a table without a primary key, the
  distinct branch rows not already present in main (`branch EXCEPT main`, NULLs equal) are
  inserted, so a row updated in the branch arrives as an additional row.
- Both: a table created in the branch that main lacks is created in main with all its rows
  (a sequence its defaults use, created in the branch, is created in main too). Sequences
  behind the defaults of merged tables are moved past the merged values (branch_seq).
  Any constraint violation (e.g. a UNIQUE column in main_wins) fails the whole merge with
  nothing changed; the branch stays active.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import duckdb

from proxy.agent.branches import seq as branch_seq
from proxy.agent.branches.copy import (
    TMP_PREFIX,
    base_tables,
    column_names,
    copy_table,
    insertable,
    primary_key_columns,
    quote_ident,
)
from proxy.agent.branches.ddl import index_sql, table_ddl
from proxy.agent.branches.fk import (
    ForeignKey,
    fill,
    foreign_keys,
    referencing_closure,
    self_keys,
    topo_order,
)
from proxy.agent.branches.sql import db_error
from proxy.core.errors import AgentError

STRATEGIES = ("branch_wins", "main_wins")


@dataclass
class _Rebuild:
    """What it takes to create one of main's tables again (read before it is dropped)."""

    ddl: str
    generated: set[str]
    rows: int
    indexes: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    stage: str | None = None  # temp table holding main's rows (tables the branch did not touch)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _save(cur: duckdb.DuckDBPyConnection, table: str, touched: bool) -> _Rebuild:
    ddl = table_ddl(cur, "main", table, "main", table)
    if ddl is None:
        raise AgentError.conflict(f"{table}: cannot read main's definition to rebuild it")
    rows = cur.execute(f"SELECT count(*) FROM main.{quote_ident(table)}").fetchone()[0]
    saved = _Rebuild(ddl.sql, ddl.generated, int(rows))
    saved.indexes = index_sql(cur, "main", table, "main", table)
    target = f"main.{quote_ident(table)}"
    (comment,) = cur.execute(
        "SELECT comment FROM system.main.duckdb_tables() WHERE schema_name = 'main' AND table_name = ? "
        "AND database_name = system.main.current_database()",
        [table],
    ).fetchone()
    if comment:
        saved.comments.append(f"COMMENT ON TABLE {target} IS {_literal(comment)}")
    for column, text in cur.execute(
        "SELECT column_name, comment FROM system.main.duckdb_columns() WHERE schema_name = 'main' "
        "AND table_name = ? AND database_name = system.main.current_database() "
        "AND comment IS NOT NULL",
        [table],
    ).fetchall():
        saved.comments.append(
            f"COMMENT ON COLUMN {target}.{quote_ident(column)} IS {_literal(text)}"
        )
    if not touched:
        saved.stage = quote_ident("__hati_keep_" + uuid.uuid4().hex)
        cur.execute(f"CREATE TEMP TABLE {saved.stage} AS SELECT * FROM {target}")
    return saved


def merge_tables(cur: duckdb.DuckDBPyConnection, schema: str, strategy: str) -> list[dict]:
    """Apply `strategy` for every base table of the branch (see the module docstring)."""
    main_tables = base_tables(cur, "main")
    mine = {
        low: name
        for low, name in base_tables(cur, schema).items()
        # an interrupted copy's leftover, or a snapshot (branch_stats): not data
        if not low.startswith(TMP_PREFIX) and not low.startswith("_hatidata")
    }
    created = {low for low in mine if low not in main_tables}
    touched = set(mine) - created
    main_fks = foreign_keys(cur, "main")
    fks = main_fks + [fk for fk in foreign_keys(cur, schema) if fk.child in created]
    rebuild: set[str] = set()
    if strategy == "branch_wins":
        # Tables main references (self-references too) cannot be emptied: rebuilt.
        rebuild = referencing_closure(main_fks, touched & {fk.parent for fk in main_fks})
    order = topo_order(set(mine) | rebuild, fks)
    saved = {low: _save(cur, main_tables[low], low in touched) for low in order if low in rebuild}
    for low in reversed(order):  # referencing tables first
        if low in rebuild:
            cur.execute(f"DROP TABLE main.{quote_ident(main_tables[low])}")
    report: list[dict] = []
    for low in order:
        table = mine.get(low) or main_tables[low]
        try:
            entry = _merge_one(cur, schema, strategy, table, low, main_tables, saved, main_fks)
            entry.update(_sequences(cur, main_tables.get(low, table)))
        except duckdb.Error as exc:
            err = db_error(exc)
            raise AgentError(err.code, f"merging {table}: {err.message}", sqlstate=err.sqlstate,
                             http_status=err.http_status, hint=err.hint) from None  # fmt: skip
        report.append(entry)
    for item in saved.values():
        if item.stage is not None:
            cur.execute(f"DROP TABLE {item.stage}")
    return report


def _sequences(cur: duckdb.DuckDBPyConnection, table: str) -> dict[str, Any]:
    moved = branch_seq.advance(cur, "main", table)
    return {"sequences": moved} if moved else {}


def _merge_one(
    cur: duckdb.DuckDBPyConnection,
    schema: str,
    strategy: str,
    table: str,
    low: str,
    main_tables: dict[str, str],
    saved: dict[str, _Rebuild],
    main_fks: list[ForeignKey],
) -> dict[str, Any]:
    src = f"{quote_ident(schema)}.{quote_ident(table)}"
    if low not in main_tables:
        kept = copy_table(cur, schema, table, "main", table, move_sequences=True)
        n = cur.execute(f"SELECT count(*) FROM main.{quote_ident(table)}").fetchone()[0]
        return {"table": table, "action": "created", "rows_inserted": n, "kept": kept}
    main_name = main_tables[low]
    dst = f"main.{quote_ident(main_name)}"
    own_fks = self_keys(main_fks, main_name)
    if low in saved:
        item = saved[low]
        cur.execute(item.ddl)
        if item.stage is not None:  # not touched by the branch: its own rows again
            cols = insertable(cur, "main", main_name, item.generated)
            fill(cur, dst, cols, f"SELECT {_list(cols)} FROM {item.stage}", own_fks)
            entry = {"table": main_name, "action": "kept", "rows": item.rows,
                     "note": "rebuilt: it references a table the branch replaced"}  # fmt: skip
        else:
            cols = _common(cur, schema, table, main_name, item.generated)
            n = fill(cur, dst, cols, f"SELECT {_list(cols)} FROM {src}", own_fks)
            entry = {"table": main_name, "action": "replaced", "rows_deleted": item.rows,
                     "rows_inserted": n, "rebuilt": True}  # fmt: skip
        for sql in item.indexes + item.comments:
            cur.execute(sql)
        return entry
    generated = _generated(cur, main_name)
    cols = _common(cur, schema, table, main_name, generated)
    if strategy == "branch_wins":
        deleted = cur.execute(f"DELETE FROM {dst}").fetchone()[0]
        n = fill(cur, dst, cols, f"SELECT {_list(cols)} FROM {src}", own_fks)
        return {"table": main_name, "action": "replaced", "rows_deleted": int(deleted),
                "rows_inserted": n}  # fmt: skip
    pk = primary_key_columns(cur, "main", main_name)
    if pk:
        if any(p.lower() not in {c.lower() for c in column_names(cur, schema, table)} for p in pk):
            raise AgentError.conflict(f"{table}: the branch lacks main's primary key columns")
        match = " AND ".join(f"m.{quote_ident(p)} = b.{quote_ident(p)}" for p in pk)
        sel = ", ".join(f"b.{quote_ident(c)}" for c in cols)
        source = f"SELECT {sel} FROM {src} b WHERE NOT EXISTS (SELECT 1 FROM {dst} m WHERE {match})"
    else:
        source = f"SELECT {_list(cols)} FROM {src} EXCEPT SELECT {_list(cols)} FROM {dst}"
    n = fill(cur, dst, cols, source, own_fks)
    return {"table": main_name, "action": "inserted_missing", "key": pk or None,
            "rows_inserted": n}  # fmt: skip


def _list(cols: list[str]) -> str:
    return ", ".join(quote_ident(c) for c in cols)


def _generated(cur: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    ddl = table_ddl(cur, "main", table, "main", table)
    return ddl.generated if ddl is not None else set()


def _common(
    cur: duckdb.DuckDBPyConnection, schema: str, table: str, main_name: str, generated: set[str]
) -> list[str]:
    """main's writable columns that the branch's table also has."""
    branch_cols = {c.lower() for c in column_names(cur, schema, table)}
    common = [c for c in insertable(cur, "main", main_name, generated) if c.lower() in branch_cols]
    if not common:
        raise AgentError.conflict(f"{table}: the branch and main share no column")
    return common
