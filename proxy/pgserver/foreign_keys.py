"""FOREIGN KEYs kept and enforced by the server, as PostgreSQL does.

DuckDB 1.5 refuses `ON DELETE CASCADE / SET NULL / SET DEFAULT` and `DEFERRABLE`, cannot
add a foreign key to an existing table, and checks a DELETE of a parent row against the
children deleted earlier in the same transaction (an ORM's cascade, children first,
fails). So foreign keys never reach DuckDB (transpiler/constraint_ddl.py takes them out of
CREATE TABLE); they live in the registry table `main.__hati_constraints` (contype 'f'),
which pg_constraint and information_schema read.

After each write whose SQL names a table of a foreign key (child or parent), in the same
transaction: a parent's ON DELETE CASCADE / SET NULL / SET DEFAULT is carried out on the
children left without a parent (followed on to their own children), then every
immediate foreign key of those tables is checked; a child without its parent is 23503 and
the statement fails (the caller rolls it back). DEFERRABLE INITIALLY DEFERRED keys are
checked at COMMIT. ON UPDATE actions other than NO ACTION / RESTRICT are not carried out:
an UPDATE of a referenced key fails with 23503 instead (a NOTICE says so when declared).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from proxy.pgserver.alter_rebuild import TableName, resolve_table
from proxy.wire.errors import PgError
from transpiler.constraint_ddl import ForeignKeySpec, default_name, quote, renamed

REGISTRY = "main.__hati_constraints"
_ACTION_WORDS = {"c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT", "r": "RESTRICT"}

_generation = itertools.count(1)
_current = 1
_cache: dict[int, tuple[int, list[ForeignKey]]] = {}


@dataclass(frozen=True, slots=True)
class ForeignKey:
    schema: str
    table: str
    name: str
    columns: tuple[str, ...]
    ref_schema: str
    ref_table: str
    ref_columns: tuple[str, ...]
    on_delete: str
    deferred: bool
    deferrable: bool = False

    def child(self) -> str:
        return f"{quote(self.schema)}.{quote(self.table)}"

    def parent(self) -> str:
        return f"{quote(self.ref_schema)}.{quote(self.ref_table)}"


def changed() -> None:
    """The registry changed (constraint DDL ran): connections read it again."""
    global _current
    _current = next(_generation) + 1


def forget(cur: Any) -> None:
    _cache.pop(id(cur), None)
    _checks.pop(id(cur), None)


def load(cur: Any) -> list[ForeignKey]:
    """The foreign keys this connection sees (read again after constraint DDL)."""
    hit = _cache.get(id(cur))
    if hit is not None and hit[0] == _current:
        return hit[1]
    rows = cur.execute(
        f"SELECT schema_name, table_name, conname, columns, ref_schema, ref_table, "
        f"ref_columns, on_delete, deferred, \"deferrable\" FROM {REGISTRY} r WHERE contype = 'f' "
        "AND EXISTS (SELECT 1 FROM system.main.duckdb_tables() t WHERE t.schema_name = r.schema_name "
        "AND t.table_name = r.table_name "
        "AND t.database_name = system.main.current_database()) "
        # a key whose parent was dropped (or renamed) goes with it
        "AND EXISTS (SELECT 1 FROM system.main.duckdb_tables() t WHERE t.schema_name = r.ref_schema "
        "AND t.table_name = r.ref_table "
        "AND t.database_name = system.main.current_database())"
    ).fetchall()
    fks = [
        ForeignKey(s, t, n, tuple(c), rs, rt, tuple(rc), d or "a", bool(df), bool(da))
        for s, t, n, c, rs, rt, rc, d, df, da in rows
    ]
    _cache[id(cur)] = (_current, fks)
    _checks[id(cur)] = {
        (table.lower(), text): name
        for table, text, name in cur.execute(
            "SELECT c.table_name, c.constraint_text, coalesce((SELECT min(r.conname) FROM "
            f"{REGISTRY} r WHERE r.contype = 'c' AND r.schema_name = c.schema_name AND "
            "r.table_name = c.table_name AND r.expression = c.constraint_text), "
            "c.constraint_name) FROM system.main.duckdb_constraints() c WHERE c.constraint_type = 'CHECK' "
            "AND c.database_name = system.main.current_database()"
        ).fetchall()
    }
    return fks


_checks: dict[int, dict[tuple[str, str], str]] = {}
_CHECK_FAILED = re.compile(r"^CHECK constraint failed on table (.+) with expression (CHECK\(.*\))$")


def name_check_violation(cur: Any, err: PgError) -> None:
    """DuckDB's 23514 message (the table and the expression) made PostgreSQL's, naming
    the constraint, from the names this connection read last (load)."""
    found = _CHECK_FAILED.match(err.message)
    if found is None:
        return
    table, text = found.groups()
    name = _checks.get(id(cur), {}).get((table.lower(), text))
    if name is not None:
        err.message = f'new row for relation "{table}" violates check constraint "{name}"'


# SET CONSTRAINTS of the open transaction, per connection: constraint name (None: ALL)
# -> deferred?
_modes: dict[int, dict[str | None, bool]] = {}


def _deferred(cur: Any, fk: ForeignKey) -> bool:
    """Is the key checked at COMMIT now? Its declaration, unless SET CONSTRAINTS said
    otherwise (only DEFERRABLE keys can be deferred)."""
    if not fk.deferrable:
        return False
    modes = _modes.get(id(cur))
    if not modes:
        return fk.deferred
    return modes.get(fk.name, modes.get(None, fk.deferred))


def set_mode(cur: Any, names: list[str] | None, deferred: bool) -> None:
    """SET CONSTRAINTS {ALL | names} {IMMEDIATE | DEFERRED} in a transaction block; a key
    made IMMEDIATE is checked at once, as in PostgreSQL."""
    fks = load(cur)
    if names is not None:
        known = {fk.name for fk in fks}
        for name in names:
            if name not in known:
                raise PgError("42704", f'constraint "{name}" does not exist')
        for fk in fks:
            if fk.name in names and not fk.deferrable:
                raise PgError("55000", f'constraint "{fk.name}" is not deferrable')
    modes = _modes.setdefault(id(cur), {})
    if names is None:
        modes.clear()
        modes[None] = deferred
    else:
        modes.update(dict.fromkeys(names, deferred))
    if not deferred:
        for fk in fks:
            if fk.deferrable and (names is None or fk.name in names):
                _check(cur, fk, child_written=True)


def end_transaction(cur: Any) -> None:
    _modes.pop(id(cur), None)


_GONE = (
    "EXISTS (SELECT 1 FROM system.main.duckdb_tables() t WHERE t.schema_name = {schema} "
    "AND t.table_name = {table} AND t.database_name = system.main.current_database())"
)


_COLUMN_GONE = (
    "EXISTS (SELECT 1 FROM unnest({columns}) u(c) WHERE NOT EXISTS (SELECT 1 FROM "
    "system.main.duckdb_columns() dc WHERE dc.database_name = system.main.current_database() AND "
    "dc.schema_name = r.{schema} AND dc.table_name = r.{table} AND "
    "lower(dc.column_name) = lower(u.c)))"
)


def forget_dropped(cur: Any) -> None:
    """After DROP TABLE / DROP SCHEMA / ALTER TABLE: the registry's rows of tables or
    columns that are gone go too (as PostgreSQL drops a constraint with its column; a new
    table of the same name starts without them)."""
    cur.execute(
        f"DELETE FROM {REGISTRY} r WHERE NOT "
        + _GONE.format(schema="schema_name", table="table_name")
        + " OR (contype = 'f' AND NOT "
        + _GONE.format(schema="ref_schema", table="ref_table")
        + ") OR "
        + _COLUMN_GONE.format(columns="columns", schema="schema_name", table="table_name")
        + " OR (contype = 'f' AND "
        + _COLUMN_GONE.format(columns="ref_columns", schema="ref_schema", table="ref_table")
        + ")"
    )
    if _triggers_off:  # a new table of a dropped one's name has its triggers on
        present = cur.execute(
            "SELECT schema_name, lower(table_name) FROM system.main.duckdb_tables() "
            "WHERE database_name = system.main.current_database()"
        ).fetchall()
        _triggers_off.intersection_update(present)
    changed()


def follow_rename(cur: Any, sql: str) -> None:
    """After ALTER TABLE ... RENAME [COLUMN] ran: the registry's rows follow the table or
    column, on both sides of a key (they belong to the table, as in PostgreSQL; they were
    dropped with the old name before, leaving the children unchecked)."""
    r = renamed(sql)
    if r is None:
        return
    table = resolve_table(cur, TableName(r.new_table or r.table, r.schema))
    if table is None or table.temporary:
        return
    pairs = (("schema_name", "table_name", "columns"), ("ref_schema", "ref_table", "ref_columns"))
    for schema_col, table_col, columns_col in pairs:
        where = f"lower({schema_col}) = lower(?) AND lower({table_col}) = lower(?)"
        if r.new_table is not None:
            cur.execute(
                f"UPDATE {REGISTRY} SET {table_col} = ? WHERE {where}",
                [table.name, table.schema, r.table],
            )
        else:
            cur.execute(
                f"UPDATE {REGISTRY} SET {columns_col} = list_transform({columns_col}, "
                "c -> CASE WHEN lower(c) = lower(?) THEN ? ELSE c END) WHERE " + where,
                [r.column, r.new_column, table.schema, table.name],
            )
    changed()


# Tables whose foreign key triggers are off (ALTER TABLE t DISABLE TRIGGER ALL), by
# (schema, lower-case name), for every connection: a write to such a child is not checked,
# nor is one to such a parent (its ON DELETE actions are not carried out either).
_triggers_off: set[tuple[str, str]] = set()


def switch_triggers(cur: Any, relation: str, enable: bool) -> None:
    """ALTER TABLE `relation` {ENABLE | DISABLE} TRIGGER ALL (PostgreSQL keeps foreign keys
    as triggers). Rows written meanwhile are not checked later either (as there)."""
    parts = [p.strip('"') for p in relation.split(".")]
    table = resolve_table(cur, TableName(parts[-1], parts[-2] if len(parts) > 1 else None))
    if table is None:
        return
    key = (table.schema, table.name.lower())
    if enable:
        _triggers_off.discard(key)
    else:
        _triggers_off.add(key)


def _off(schema: str, table: str) -> bool:
    return bool(_triggers_off) and (schema, table.lower()) in _triggers_off


def touched(fks: list[ForeignKey], sql: str) -> bool:
    """Does the statement's SQL name a table of any foreign key? (A cheap test: a name
    that only appears in a string costs a needless check, never a missed one.)"""
    if not fks:
        return False
    low = sql.lower()
    return any(fk.table.lower() in low or fk.ref_table.lower() in low for fk in fks)


def after_write(cur: Any, sql: str, kind: str, deferred_too: bool) -> None:
    """After a DELETE, carry out the ON DELETE actions; then check the immediate foreign
    keys (`deferred_too`: all of them, outside a transaction block) of the tables the
    statement may have written (named in `sql`); 23503 on a violation. (An INSERT or
    UPDATE that leaves a child without its parent is an error, never an action.)"""
    fks = load(cur)
    low = sql.lower()
    written = {
        t.lower()
        for fk in fks
        for t in (fk.table, fk.ref_table)
        if re.search(r'(?<![\w$])"?' + re.escape(t.lower()) + r'"?(?![\w$])', low)
    }
    if not written:
        return
    done: set[str] = set()
    todo = sorted(written) if kind == "delete" else []
    while todo:  # actions, followed on to the children they changed
        parent = todo.pop()
        done.add(parent)
        for fk in fks:
            if fk.ref_table.lower() != parent or fk.on_delete not in ("c", "n", "d"):
                continue
            if _off(fk.ref_schema, fk.ref_table):
                continue
            orphan = _orphan_condition(fk, "c")
            target = f"{fk.child()} AS c"
            _refuse_triggered_action(cur, fk, target, orphan)
            if fk.on_delete == "c":
                n = cur.execute(f"DELETE FROM {target} WHERE {orphan}").fetchone()[0]
            else:
                value = "NULL" if fk.on_delete == "n" else "DEFAULT"
                sets = ", ".join(f"{quote(col)} = {value}" for col in fk.columns)
                n = cur.execute(f"UPDATE {target} SET {sets} WHERE {orphan}").fetchone()[0]
            if n and fk.table.lower() not in done:
                todo.append(fk.table.lower())
            written.add(fk.table.lower())
    for fk in fks:
        if not deferred_too and _deferred(cur, fk):
            continue
        child = fk.table.lower() in written and not _off(fk.schema, fk.table)
        parent = fk.ref_table.lower() in written and not _off(fk.ref_schema, fk.ref_table)
        if child or parent:
            _check(cur, fk, child_written=child)


def check_deferred(cur: Any) -> None:
    """Before COMMIT: the deferred foreign keys hold."""
    for fk in load(cur):
        if fk.deferrable:  # (the others were checked after each write)
            _check(cur, fk, child_written=True)


def commit(cur: Any) -> None:
    """COMMIT, after the deferred foreign keys are checked (a violation rolls back)."""
    try:
        check_deferred(cur)
    except PgError:
        cur.rollback()
        raise
    cur.commit()


def _refuse_triggered_action(cur: Any, fk: ForeignKey, target: str, orphan: str) -> None:
    """An ON DELETE action is carried out by the server's own DELETE / UPDATE, which does
    not fire the child's row triggers (PostgreSQL's does): 0A000 rather than skip them."""
    event = 8 if fk.on_delete == "c" else 16  # pg_trigger.tgtype DELETE / UPDATE
    fired = cur.execute(
        "SELECT name FROM main.__hati_triggers WHERE schema_name = ? AND table_name = ? "
        "AND enabled <> 'D' AND tgtype & ? <> 0 ORDER BY name LIMIT 1",
        [fk.schema, fk.table, event],
    ).fetchone()
    if (
        fired is None
        or not cur.execute(f"SELECT count(*) FROM {target} WHERE {orphan}").fetchone()[0]
    ):
        return
    raise PgError(
        "0A000",
        f'ON DELETE {_ACTION_WORDS[fk.on_delete]} of foreign key "{fk.name}" into "{fk.table}", '
        f'whose trigger "{fired[0]}" it would fire, is not supported: hatiproxy does not run '
        "triggers from foreign key actions",
    )


def _orphan_condition(fk: ForeignKey, alias: str) -> str:
    present = " AND ".join(f"{alias}.{quote(c)} IS NOT NULL" for c in fk.columns)
    match = " AND ".join(
        f"p.{quote(r)} = {alias}.{quote(c)}"
        for c, r in zip(fk.columns, fk.ref_columns, strict=True)
    )
    return f"{present} AND NOT EXISTS (SELECT 1 FROM {fk.parent()} AS p WHERE {match})"


def _check(cur: Any, fk: ForeignKey, child_written: bool) -> None:
    cols = ", ".join(f"c.{quote(c)}::VARCHAR" for c in fk.columns)
    row = cur.execute(
        f"SELECT {cols} FROM {fk.child()} AS c WHERE {_orphan_condition(fk, 'c')} LIMIT 1"
    ).fetchone()
    if row is None:
        return
    values = ", ".join("null" if v is None else str(v) for v in row)
    if child_written:
        err = PgError(
            "23503",
            f'insert or update on table "{fk.table}" violates foreign key constraint "{fk.name}"',
            detail=f"Key ({', '.join(fk.columns)})=({values}) is not present in table "
            f'"{fk.ref_table}".',
        )
    else:
        err = PgError(
            "23503",
            f'update or delete on table "{fk.ref_table}" violates foreign key constraint '
            f'"{fk.name}" on table "{fk.table}"',
            detail=f"Key ({', '.join(fk.ref_columns)})=({values}) is still referenced from "
            f'table "{fk.table}".',
        )
    # the ErrorResponse names the referencing table either way, as PostgreSQL's does
    err.schema_name = "public" if fk.schema == "main" else fk.schema
    err.table_name, err.constraint_name = fk.table, fk.name
    raise err


def add(
    cur: Any, table: Any, spec: ForeignKeySpec, columns: tuple[str, ...], notices: list[str]
) -> None:
    """Register a foreign key of `table` (alter_rebuild._Table), after PostgreSQL's checks:
    the referenced table and a unique key on its columns exist, existing rows comply."""
    ref_schema = spec.ref_schema
    if ref_schema is None:  # an unqualified name: the search path's, as PostgreSQL finds it
        found = resolve_table(cur, TableName(spec.ref_table, None))
        ref_schema = found.schema if found is not None else table.schema
    ref = cur.execute(
        "SELECT table_oid, table_name, schema_name FROM system.main.duckdb_tables() WHERE "
        "database_name = ? AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?)",
        [table.database, ref_schema, spec.ref_table],
    ).fetchone()
    if ref is None:
        raise PgError("42P01", f'relation "{spec.ref_table}" does not exist')
    ref_oid, ref_table, ref_schema = ref
    keys = _unique_keys(cur, ref_oid)
    ref_columns = spec.ref_columns
    if not ref_columns:
        primary = [k for kind, k in keys if kind == "p"]
        if not primary:
            raise PgError("42830", f'there is no primary key for referenced table "{ref_table}"')
        ref_columns = primary[0]
    by_lower = {
        r[0].lower(): r[0]
        for r in cur.execute(
            "SELECT column_name FROM system.main.duckdb_columns() WHERE table_oid = ?", [ref_oid]
        ).fetchall()
    }
    missing = [c for c in ref_columns if c.lower() not in by_lower]
    if missing:
        raise PgError(
            "42703", f'column "{missing[0]}" referenced in foreign key constraint does not exist'
        )
    ref_columns = tuple(by_lower[c.lower()] for c in ref_columns)
    if len(ref_columns) != len(columns):
        raise PgError(
            "42830", "number of referencing and referenced columns for foreign key disagree"
        )
    if not any({c.lower() for c in k} == {c.lower() for c in ref_columns} for _, k in keys):
        raise PgError(
            "42830",
            f'there is no unique constraint matching given keys for referenced table "{ref_table}"',
        )
    name = spec.name or default_name(table.name, columns, "fkey")
    exists = cur.execute(
        f"SELECT 1 FROM {REGISTRY} WHERE schema_name = ? AND table_name = ? AND conname = ?",
        [table.schema, table.name, name],
    ).fetchone()
    if exists:
        raise PgError("42710", f'constraint "{name}" for relation "{table.name}" already exists')
    cur.execute(
        f"INSERT INTO {REGISTRY} VALUES (?, ?, ?, 'f', ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        [table.schema, table.name, name, list(columns), ref_schema, ref_table,
         list(ref_columns), spec.on_delete, spec.on_update, spec.deferrable, spec.deferred],
    )  # fmt: skip
    if spec.on_update not in ("a", "r"):
        notices.append(
            f'foreign key "{name}": ON UPDATE {_ACTION_WORDS[spec.on_update]} is not carried '
            "out by hatiproxy; an UPDATE of a referenced key fails instead (23503)"
        )
    fk = ForeignKey(
        table.schema, table.name, name, columns, ref_schema, ref_table, ref_columns,
        spec.on_delete, spec.deferred,
    )  # fmt: skip
    if not spec.deferred:
        _check(cur, fk, child_written=True)


def _unique_keys(cur: Any, oid: int) -> list[tuple[str, tuple[str, ...]]]:
    """The table's PRIMARY KEY ('p') and UNIQUE keys ('u': constraints, unique indexes)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for kind, cols in cur.execute(
        "SELECT constraint_type, constraint_column_names FROM system.main.duckdb_constraints() "
        "WHERE table_oid = ? AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')",
        [oid],
    ).fetchall():
        out.append(("p" if kind == "PRIMARY KEY" else "u", tuple(cols)))
    for (expressions,) in cur.execute(
        "SELECT expressions FROM system.main.duckdb_indexes() WHERE table_oid = ? AND is_unique",
        [oid],
    ).fetchall():
        names = [e.strip().strip('"') for e in (expressions or "").strip("[]").split(",")]
        out.append(("u", tuple(names)))
    return out
