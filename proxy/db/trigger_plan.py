"""What a transpiled INSERT / UPDATE / DELETE needs around it for the AFTER and
statement-level triggers it fires (proxy/pgserver/after_triggers.py runs the plan): the
triggers in PostgreSQL's firing order (by name), the statement made to return every column
of the rows it writes (NEW; OLD for a DELETE) into a temp table, and for an AFTER UPDATE
trigger that reads OLD the pre-image of the rows, matched to the new rows by the table's
primary key. Runs on the worker thread (it reads the trigger registry).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import duckdb
import sqlglot
from sqlglot import exp

from proxy.db import row_triggers
from proxy.wire.errors import PgError
from transpiler.trigger_ddl import BEFORE, DELETE, INSERT, ROW, UPDATE
from transpiler.trigger_rewrite import TableTriggers, Trigger, find_table

EVENTS = {"insert": INSERT, "update": UPDATE, "delete": DELETE}
_SEQ = itertools.count(1)
_OLD = re.compile(r"\bold\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Plan:
    found: TableTriggers
    op: str  # INSERT, UPDATE, DELETE
    before_statement: tuple[Trigger, ...]
    after_row: tuple[Trigger, ...]
    after_statement: tuple[Trigger, ...]
    main_sql: str  # the statement RETURNING * (when AFTER ROW triggers fire)
    returning: str | None  # the client's RETURNING list (PostgreSQL SQL), None: none
    alias: str  # what the RETURNING list calls the table
    new_table: str  # temp tables of this firing (rows in the statement's order)
    old_table: str | None  # OLD: UPDATE (pre-image) and DELETE (the deleted rows)
    pre_sql: str | None  # UPDATE: CREATE TEMP TABLE <pre> AS the rows before
    pre_table: str | None
    key: tuple[str, ...]  # the primary key matching pre-image and new rows


def plan(cur: duckdb.DuckDBPyConnection, sql: str, kind: str) -> Plan | None:
    """The plan of `sql` (DuckDB SQL of a `kind` statement); None: no AFTER or
    statement-level trigger fires."""
    tables = row_triggers.load(cur, sql)
    if not tables:
        return None
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(tree, (exp.Insert, exp.Update, exp.Delete)):
        return None
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(target, exp.Table):
        return None
    found = find_table(target, tables)
    if found is None:
        return None
    event = EVENTS[kind]
    set_columns = set()
    if isinstance(tree, exp.Update):
        set_columns = {e.this.name for e in tree.expressions if isinstance(e, exp.EQ)}

    def fires(t: Trigger) -> bool:
        if not t.tgtype & event:
            return False
        return event != UPDATE or not t.columns or bool(set_columns & set(t.columns))

    around = [t for t in found.triggers if fires(t) and t.tgtype & (ROW | BEFORE) != ROW | BEFORE]
    if not around:
        return None
    after_row = tuple(t for t in around if t.tgtype & ROW)
    conflict = tree.args.get("conflict")
    if after_row and isinstance(conflict, exp.OnConflict) and conflict.expressions:
        raise PgError(
            "0A000",
            f'INSERT ... ON CONFLICT DO UPDATE on "{found.table}", which has AFTER ROW '
            "triggers, is not supported (DO NOTHING is)",
        )
    n = next(_SEQ)
    alias = target.alias_or_name
    returning = tree.args.get("returning")
    main = tree.copy()
    main.set("returning", exp.Returning(expressions=[exp.Star()]))
    old_table = pre_sql = pre_table = None
    key: tuple[str, ...] = ()
    if kind == "delete":
        old_table = f"__hati_trg{n}_rows"
    elif kind == "update" and any(_reads_old(t) for t in after_row):
        key = _primary_key(cur, found)
        if not key or set_columns & set(key):
            raise PgError(
                "0A000",
                f'an AFTER UPDATE trigger reading OLD on "{found.table}" needs the table to '
                "have a primary key the UPDATE does not change: hatiproxy matches the old "
                "rows to the new ones by it",
            )
        pre_table, old_table = f"__hati_trg{n}_pre", f"__hati_trg{n}_old"
        keys = ", ".join(_q(c) for c in key)
        inner = exp.select(*[exp.column(c, table=alias, quoted=True) for c in key])
        inner = inner.from_(target.copy())
        source = tree.args.get("from") or tree.args.get("from_")
        if source is not None:  # UPDATE ... FROM x WHERE w: the target's rows w takes
            inner = inner.join(source.this.copy())
        if tree.args.get("where"):
            inner = inner.where(tree.args["where"].this.copy())
        pre_sql = (
            f"CREATE OR REPLACE TEMP TABLE {_q(pre_table)} AS SELECT * FROM "
            f"{_q(found.schema)}.{_q(found.table)} WHERE ({keys}) IN ({inner.sql('duckdb')})"
        )
    return Plan(
        found,
        kind.upper(),
        tuple(t for t in around if t.tgtype & BEFORE),
        after_row,
        tuple(t for t in around if not t.tgtype & (ROW | BEFORE)),
        main.sql("duckdb"),
        ", ".join(e.sql("postgres") for e in returning.expressions) if returning else None,
        alias,
        f"__hati_trg{n}_new" if kind != "delete" else f"__hati_trg{n}_rows",
        old_table,
        pre_sql,
        pre_table,
        key,
    )


def align_old(cur: duckdb.DuckDBPyConnection, p: Plan) -> None:
    """UPDATE: OLD rows in the new rows' order (row i of each is one row)."""
    assert p.pre_table is not None and p.old_table is not None
    on = " AND ".join(f"n.{_q(c)} = o.{_q(c)}" for c in p.key)
    cur.execute(
        f"CREATE OR REPLACE TEMP TABLE {_q(p.old_table)} AS SELECT o.* FROM "
        f"(SELECT rowid AS __hati_i, * FROM {_q(p.new_table)}) n LEFT JOIN {_q(p.pre_table)} o "
        f"ON {on} ORDER BY n.__hati_i"
    )


def drop(cur: duckdb.DuckDBPyConnection, p: Plan) -> None:
    for name in (p.new_table, p.old_table, p.pre_table):
        if name is not None:
            cur.execute(f"DROP TABLE IF EXISTS temp.main.{_q(name)}")


def rows(cur: duckdb.DuckDBPyConnection, p: Plan) -> tuple[int, dict[str, int]]:
    """How many rows the statement wrote, and each temp table's first rowid."""
    bases: dict[str, int] = {}
    n = 0
    for name in (p.new_table, p.old_table):
        if name is not None and name not in bases:
            n, first = cur.execute(
                f"SELECT count(*), coalesce(min(rowid), 0) FROM temp.main.{_q(name)}"
            ).fetchone()
            bases[name] = int(first)
    return int(n), bases


def _reads_old(trigger: Trigger) -> bool:
    """Does the trigger name OLD? (A word `old` in a string counts too: at worst a
    refusal for a table without a primary key, never a wrong OLD.)"""
    return _OLD.search((trigger.when or "") + " " + trigger.body) is not None


def _primary_key(cur: duckdb.DuckDBPyConnection, found: TableTriggers) -> tuple[str, ...]:
    row = cur.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() WHERE schema_name = ? AND "
        "table_name = ? AND constraint_type = 'PRIMARY KEY' AND database_name = "
        "system.main.current_database()",
        [found.schema, found.table],
    ).fetchone()
    return tuple(row[0]) if row else ()


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
