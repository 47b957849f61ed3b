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
_PARAM = re.compile(r"\$(\d+)")


@dataclass(frozen=True, slots=True)
class Plan:
    found: TableTriggers
    op: str  # INSERT, UPDATE, DELETE
    before_statement: tuple[tuple[Trigger, str], ...]  # (trigger, its TG_OP)
    after_row: tuple[Trigger, ...]
    after_statement: tuple[tuple[Trigger, str], ...]
    main_sql: str  # the statement RETURNING * (when AFTER ROW triggers fire)
    returning: str | None  # the client's RETURNING list (PostgreSQL SQL), None: none
    alias: str  # what the RETURNING list calls the table
    new_table: str  # temp tables of this firing (rows in the statement's order)
    old_table: str | None  # OLD: UPDATE (pre-image) and DELETE (the deleted rows)
    # UPDATE / upsert: CREATE TEMP TABLE <pre> AS the rows before (and an upsert's order)
    pre_sql: tuple[str, ...]
    pre_table: str | None
    key: tuple[str, ...]  # the primary key matching pre-image and new rows
    # INSERT ... ON CONFLICT DO UPDATE: the AFTER UPDATE row triggers, fired for the rows
    # whose key was there before (the others fire `after_row`, the INSERT ones)
    upsert: tuple[Trigger, ...] | None = None


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

    conflict = tree.args.get("conflict")
    upsert = isinstance(conflict, exp.OnConflict) and bool(conflict.expressions)
    if upsert:
        set_columns = {e.this.name for e in conflict.expressions if isinstance(e, exp.EQ)}

    def fires(t: Trigger, event: int) -> bool:
        if not t.tgtype & event or t.tgtype & (ROW | BEFORE) == ROW | BEFORE:
            return False
        return event != UPDATE or not t.columns or bool(set_columns & set(t.columns))

    around = [(t, kind.upper()) for t in found.triggers if fires(t, event)]
    updating = [(t, "UPDATE") for t in found.triggers if upsert and fires(t, UPDATE)]
    if not around and not updating:
        return None
    after_row = tuple(t for t, _ in around if t.tgtype & ROW)
    update_row = tuple(t for t, _ in updating if t.tgtype & ROW)
    n = next(_SEQ)
    alias = target.alias_or_name
    returning = tree.args.get("returning")
    main = tree.copy()
    main.set("returning", exp.Returning(expressions=[exp.Star()]))
    old_table = pre_table = None
    pre_sql: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    if kind == "delete":
        old_table = f"__hati_trg{n}_rows"
    elif upsert and (after_row or update_row):
        key = _conflict_key(tree, conflict, found)
        pre_table, old_table = f"__hati_trg{n}_pre", f"__hati_trg{n}_old"
        columns = [c.name for c in tree.this.expressions]
        inner = exp.select(*[exp.column(c, quoted=True) for c in key]).from_(
            exp.Subquery(
                this=tree.expression.copy(),
                alias=exp.TableAlias(
                    this=exp.to_identifier("__hati_v"),
                    columns=[exp.to_identifier(c, quoted=True) for c in columns],
                ),
            )
        )
        first = _pre_sql(pre_table, found, key, inner, sql)
        # ... and the rows' order (DuckDB returns the updated rows first): row numbers by key
        numbered = inner.copy()
        numbered.select("row_number() OVER () AS __hati_o", copy=False)
        pre_sql = (
            first,
            f"CREATE OR REPLACE TEMP TABLE {_q(pre_table + '_order')} AS "
            f"{numbered.sql('duckdb')}{_noop(sql, first=True)}",
        )
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
        inner = exp.select(*[exp.column(c, table=alias, quoted=True) for c in key])
        inner = inner.from_(target.copy())
        source = tree.args.get("from") or tree.args.get("from_")
        if source is not None:  # UPDATE ... FROM x WHERE w: the target's rows w takes
            inner = inner.join(source.this.copy())
        if tree.args.get("where"):
            inner = inner.where(tree.args["where"].this.copy())
        pre_sql = (_pre_sql(pre_table, found, key, inner, sql),)
    # PostgreSQL's order for an upsert: BEFORE INSERT then UPDATE statement triggers,
    # AFTER UPDATE then INSERT ones (nodeModifyTable.c fireBSTriggers / fireASTriggers)
    statement = [p for p in around + updating if not p[0].tgtype & ROW]
    after = [p for p in updating + around if not p[0].tgtype & (ROW | BEFORE)]
    return Plan(
        found,
        kind.upper(),
        tuple(p for p in statement if p[0].tgtype & BEFORE),
        after_row,
        tuple(after),
        main.sql("duckdb"),
        ", ".join(e.sql("postgres") for e in returning.expressions) if returning else None,
        alias,
        f"__hati_trg{n}_new" if kind != "delete" else f"__hati_trg{n}_rows",
        old_table,
        pre_sql,
        pre_table,
        key,
        update_row if upsert else None,
    )


def align_old(cur: duckdb.DuckDBPyConnection, p: Plan) -> list[bool]:
    """UPDATE: OLD rows in the new rows' order (row i of each is one row); for each
    row, whether it was there before (in an upsert: updated, not inserted)."""
    assert p.pre_table is not None and p.old_table is not None
    on = " AND ".join(f"n.{_q(c)} = o.{_q(c)}" for c in p.key)
    cur.execute(
        f"CREATE OR REPLACE TEMP TABLE {_q(p.old_table)} AS SELECT o.* FROM "
        f"(SELECT rowid AS __hati_i, * FROM {_q(p.new_table)}) n LEFT JOIN {_q(p.pre_table)} o "
        f"ON {on} ORDER BY n.__hati_i"
    )
    first = _q(p.key[0])
    return [
        bool(x)
        for (x,) in cur.execute(
            f"SELECT {first} IS NOT NULL FROM {_q(p.old_table)} ORDER BY rowid"
        ).fetchall()
    ]


def _pre_sql(
    table: str, found: TableTriggers, key: tuple[str, ...], inner: exp.Select, sql: str
) -> str:
    """CREATE TEMP TABLE `table` AS the rows whose `key` `inner` selects, before the
    statement (`sql`'s parameters, all of them, as DuckDB wants: a no-op reference)."""
    keys = ", ".join(_q(c) for c in key)
    return (
        f"CREATE OR REPLACE TEMP TABLE {_q(table)} AS SELECT * FROM "
        f"{_q(found.schema)}.{_q(found.table)} WHERE ({keys}) IN ({inner.sql('duckdb')})"
        f"{_noop(sql)}"
    )


def _noop(sql: str, first: bool = False) -> str:
    """A condition naming each of `sql`'s parameters (DuckDB wants them all used)."""
    used = sorted({int(m) for m in _PARAM.findall(sql)})
    conds = [f"(${k} IS NULL OR TRUE)" for k in used]
    if not conds:
        return ""
    return (" WHERE " if first else " AND ") + " AND ".join(conds)


def order(cur: duckdb.DuckDBPyConnection, p: Plan, n: int) -> list[int]:
    """The rows in the order the statement took them (an upsert's: its rows' order)."""
    if p.upsert is None or p.pre_table is None:
        return list(range(n))
    on = " AND ".join(f"n.{_q(c)} IS NOT DISTINCT FROM o.{_q(c)}" for c in p.key)
    rows = cur.execute(
        f"SELECT n.__hati_i FROM (SELECT row_number() OVER (ORDER BY rowid) - 1 AS __hati_i, "
        f"* FROM {_q(p.new_table)}) n LEFT JOIN {_q(p.pre_table + '_order')} o ON {on} "
        "ORDER BY o.__hati_o, n.__hati_i"
    ).fetchall()
    return [int(i) for (i,) in rows]


def _conflict_key(
    tree: exp.Insert, conflict: exp.OnConflict, found: TableTriggers
) -> tuple[str, ...]:
    """The conflict target of an upsert whose rows (VALUES or a query: read once before
    it, for the keys that were there) name its columns."""
    keys = [
        k.this if isinstance(k, exp.Ordered) else k
        for k in conflict.args.get("conflict_keys") or []
    ]
    names = tuple(k.name for k in keys if isinstance(k, (exp.Column, exp.Identifier)))
    listed = [c.name for c in tree.this.expressions] if isinstance(tree.this, exp.Schema) else []
    if (
        not names
        or len(names) != len(keys)
        or not isinstance(tree.expression, (exp.Values, exp.Query))
        or "nextval" in tree.expression.sql("duckdb").lower()  # read twice: drawn twice
        or not set(names) <= set(listed)
    ):
        raise PgError(
            "0A000",
            f'INSERT ... ON CONFLICT DO UPDATE on "{found.table}", which has AFTER triggers, '
            "is supported with ON CONFLICT (columns) among the columns it lists, and rows "
            "that draw no sequence value",
        )
    return names


def drop(cur: duckdb.DuckDBPyConnection, p: Plan) -> None:
    names = (p.new_table, p.old_table, p.pre_table, p.pre_table and p.pre_table + "_order")
    for name in names:
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
        "SELECT constraint_column_names FROM system.main.duckdb_constraints() WHERE schema_name = ? AND "
        "table_name = ? AND constraint_type = 'PRIMARY KEY' AND database_name = "
        "system.main.current_database()",
        [found.schema, found.table],
    ).fetchone()
    return tuple(row[0]) if row else ()


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
