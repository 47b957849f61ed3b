"""CREATE / ALTER / DROP DOMAIN, carried out by the server (the statement's reading and
the columns' CHECK: transpiler/domains.py).

A domain is a DuckDB type alias (its name resolves wherever a type is named: columns,
casts, function arguments) and a row in `main.__hati_domains`, its CHECKs rows in
`main.__hati_domain_checks`, written in the statement's transaction (ROLLBACK undoes
them, a restart keeps them). A table column of a domain type gets one table CHECK that
enforces the domain (transpiler/domains.column_check); ALTER DOMAIN re-creates the tables
whose columns use the domain with the new CHECK (constraint_ddl's rebuild), which checks
their rows, as PostgreSQL does.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.pgserver import alter_rebuild, constraint_ddl, domain_casts
from proxy.wire.errors import PgError
from transpiler import transpile
from transpiler.alter_type import quote
from transpiler.domains import (
    MARKER,
    DomainCheck,
    DomainDdl,
    cast_macro,
    column_check,
    macro_name,
    parse,
    value_expr,
)
from transpiler.model import Statement

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

DOMAINS = "main.__hati_domains"
CHECKS = "main.__hati_domain_checks"
_TAGS = frozenset({"CREATE DOMAIN", "ALTER DOMAIN", "DROP DOMAIN"})


def statement(text: str, tag: str) -> Statement | None:
    """The Statement of a domain DDL text (the server carries it out), else None."""
    if tag not in _TAGS:
        return None
    return Statement(sql=text, kind="ddl", tag=tag, command=parse(text))


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> str:
    """Carry out the portal's domain statement; its command tag."""
    st = portal.statement
    assert st is not None and isinstance(st.command, DomainDdl)
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if runner.txn_status == "I":
        runner.write.begin()  # a write that commits: the catalog snapshots must see it
    if in_block:  # a ROLLBACK TO replay cannot redo it: refused rather than lost
        session.savepoints.writes += 1
        session.savepoints.undoable.append(st.tag)
    notices: list[str] = []
    await runner.call(carry_out, runner.cursor, st.command, in_block, notices, sql=st.sql)
    for text in notices:
        session.send_notice(text)
    runner.param_types.invalidate()
    return st.tag


def carry_out(cur: Any, ddl: DomainDdl, in_block: bool, notices: list[str]) -> None:
    with alter_rebuild.own_transaction(cur, in_block):
        if ddl.action == "create":
            _create(cur, ddl)
        elif ddl.action == "drop":
            for schema, name in ddl.names:
                _drop(cur, dataclasses.replace(ddl, schema=schema, name=name), notices)
        elif ddl.action != "noop":
            _alter(cur, ddl, notices)


# --- reading ---------------------------------------------------------------------------


def find(cur: Any, schema: str | None, name: str) -> tuple[Any, ...] | None:
    """(schema, name, base, duck_type, default_duck, not_null) of the domain, or None."""
    return cur.execute(
        f"SELECT schema_name, name, base, duck_type, default_duck, not_null FROM {DOMAINS} "
        "WHERE name = ? AND (? IS NULL OR schema_name = ?) ORDER BY schema_name <> 'main' LIMIT 1",
        [name, schema, schema],
    ).fetchone()


def _need(cur: Any, ddl: DomainDdl) -> tuple[Any, ...]:
    row = find(cur, ddl.schema, ddl.name)
    if row is None:
        raise PgError("42704", f'type "{ddl.name}" does not exist')
    return row


def _duck(expr: str) -> str:
    """A PostgreSQL expression in DuckDB's words (through the transpiler)."""
    statements = transpile(f"SELECT {expr}")
    if len(statements) != 1 or not statements[0].sql.startswith("SELECT "):
        raise PgError("0A000", f"cannot use this expression in a domain: {expr}")
    return statements[0].sql[len("SELECT ") :]


def _duck_type(base: str) -> str:
    sql = transpile(f"CREATE TABLE __hati_domain_probe (v {base})")[-1].sql
    found = re.match(r"CREATE TABLE __hati_domain_probe \(v (.*?)(?: CHECK \(.*)?\)$", sql, re.S)
    if found is None:
        raise PgError("0A000", f"cannot make a domain over type {base}")
    return found[1]


def _typmod(base: str) -> int:
    nums = [int(n) for n in re.findall(r"\d+", base.split("(", 1)[1])] if "(" in base else []
    word = base.split("(")[0].strip().lower()
    if not nums:
        return -1
    if word in ("numeric", "decimal"):
        return ((nums[0] << 16) | (nums[1] if len(nums) > 1 else 0)) + 4
    if word in ("varchar", "character varying", "char", "character", "bpchar"):
        return nums[0] + 4
    return nums[0]


# --- CREATE / DROP ---------------------------------------------------------------------


def _create(cur: Any, ddl: DomainDdl) -> None:
    schema = ddl.schema or "main"
    taken = cur.execute(
        "SELECT bool_or(internal) FROM system.main.duckdb_types() WHERE (database_name = "
        "system.main.current_database() AND schema_name = ? OR internal) AND type_name = ?",
        [schema, ddl.name],
    ).fetchone()[0]
    if taken is not None:
        if taken:  # DuckDB's own type names (short, string, ...) cannot be taken
            raise PgError(
                "0A000",
                f'a domain cannot be named "{ddl.name}" here: DuckDB has a type of that name',
            )
        raise PgError("42710", f'type "{ddl.name}" already exists')
    duck_type = _duck_type(ddl.base)
    base_name = re.sub(r"\(.*\)", "", ddl.base).strip()
    oid = cur.execute("SELECT __hati_catalog.pg.__hati_typname_oid(?)", [base_name]).fetchone()[0]
    if oid is None:
        raise PgError("42704", f'type "{base_name}" does not exist')
    cur.execute(f"CREATE TYPE {quote(schema)}.{quote(ddl.name)} AS {duck_type}")
    default = ddl.default
    cur.execute(
        f"INSERT INTO {DOMAINS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            schema,
            ddl.name,
            ddl.base,
            oid,
            _typmod(ddl.base),
            duck_type,
            default,
            None if default is None else _rendered_default(cur, duck_type, default),
            ddl.not_null,
            ddl.collation,
        ],
    )
    for check in ddl.checks:
        _add_check(cur, schema, ddl.name, check)
    _cast_macro(cur, schema, ddl.name)


def _rendered_default(cur: Any, duck_type: str, default: str) -> str:
    """The domain's DEFAULT as DuckDB writes it in a column's default (so the catalog
    tells a column's own default from the one it got from its domain)."""
    cur.execute(
        f"CREATE OR REPLACE TEMP TABLE __hati_domain_probe (v {duck_type} "
        f"DEFAULT CAST({_duck(default)} AS {duck_type}))"
    )
    shown = cur.execute(
        "SELECT column_default FROM system.main.duckdb_columns() WHERE database_name = 'temp' "
        "AND table_name = '__hati_domain_probe'"
    ).fetchone()[0]
    cur.execute("DROP TABLE temp.main.__hati_domain_probe")
    return str(shown)


def _shown(schema: str, name: str) -> str:
    """The domain's name as PostgreSQL's messages write it (qualified off public)."""
    return name if schema == "main" else f"{schema}.{name}"


def shown_check(expr: str) -> str:
    """A CHECK as pg_get_constraintdef shows it: the expression in parentheses of its own
    (PostgreSQL's deparser adds them; its casts of constants are not added here)."""
    inner = expr.strip()
    wrapped = inner.startswith("(") and inner.endswith(")") and _balanced(inner[1:-1])
    return f"CHECK ({inner})" if wrapped else f"CHECK (({inner}))"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _add_check(cur: Any, schema: str, domain: str, check: DomainCheck) -> str:
    taken = {
        r[0]
        for r in cur.execute(
            f"SELECT conname FROM {CHECKS} WHERE schema_name = ? AND domain_name = ?",
            [schema, domain],
        ).fetchall()
    }
    name = check.name
    if name is None:
        name, n = f"{domain}_check", 0
        while name in taken:
            n += 1
            name = f"{domain}_check{n}"
    elif name in taken:
        raise PgError("42710", f'constraint "{name}" for domain "{domain}" already exists')
    cur.execute(
        f"INSERT INTO {CHECKS} VALUES (?, ?, ?, ?, ?, ?)",
        [schema, domain, name, shown_check(check.expr), _duck(value_expr(check.expr)), True],
    )
    return name


def _users(cur: Any, schema: str, name: str) -> list[tuple[Any, ...]]:
    """(table row as alter_rebuild.Table takes it, column, CHECK text) of each column of
    the domain."""
    return cur.execute(
        "SELECT t.database_name, t.schema_name, t.table_name, t.table_oid, t.sql, t.temporary,"
        " t.comment, c.constraint_column_names[1], c.constraint_text FROM system.main.duckdb_constraints() c"
        " JOIN system.main.duckdb_tables() t ON t.table_oid = c.table_oid"
        " WHERE c.constraint_type = 'CHECK' AND starts_with(c.expression, ?)",
        [f"CASE  WHEN (('{MARKER}{schema}.{name}' IS NULL))"],
    ).fetchall()


def _drop(cur: Any, ddl: DomainDdl, notices: list[str]) -> None:
    row = find(cur, ddl.schema, ddl.name)
    if row is None:
        if ddl.if_exists:
            notices.append(f'type "{ddl.name}" does not exist, skipping')
            return
        raise PgError("42704", f'type "{ddl.name}" does not exist')
    schema, name = row[0], row[1]
    users = _users(cur, schema, name)
    if users and not ddl.cascade:
        table, column = users[0][2], users[0][7]
        raise PgError(
            "2BP01",
            f"cannot drop type {name} because other objects depend on it",
            detail=f"column {column} of table {table} depends on type {name}",
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    for user in users:
        target = alter_rebuild.Table(*user[:7])
        notices.append(f"drop cascades to column {user[7]} of table {user[2]}")
        cur.execute(f"ALTER TABLE {target.qualified()} DROP COLUMN {quote(user[7])}")
    cur.execute(f"DELETE FROM {CHECKS} WHERE schema_name = ? AND domain_name = ?", [schema, name])
    cur.execute(f"DELETE FROM {DOMAINS} WHERE schema_name = ? AND name = ?", [schema, name])
    cur.execute(f"DROP MACRO IF EXISTS main.{macro_name(schema, name)}")
    cur.execute(f"DROP TYPE {quote(schema)}.{quote(name)}")


# --- ALTER -----------------------------------------------------------------------------


def _alter(cur: Any, ddl: DomainDdl, notices: list[str]) -> None:
    schema, name = _need(cur, ddl)[:2]
    where = [schema, name]
    if ddl.action == "rename":
        if find(cur, schema, ddl.new_name or "") is not None:
            raise PgError("42710", f'type "{ddl.new_name}" already exists')
        users = _users(cur, schema, name)
        duck_type = _need(cur, ddl)[3]
        cur.execute(f"DROP TYPE {quote(schema)}.{quote(name)}")
        cur.execute(f"CREATE TYPE {quote(schema)}.{quote(ddl.new_name or '')} AS {duck_type}")
        cur.execute(f"UPDATE {DOMAINS} SET name = ? WHERE schema_name = ? AND name = ?",
                    [ddl.new_name, *where])  # fmt: skip
        cur.execute(
            f"UPDATE {CHECKS} SET domain_name = ? WHERE schema_name = ? AND domain_name = ?",
            [ddl.new_name, *where],
        )
        cur.execute(f"DROP MACRO IF EXISTS main.{macro_name(schema, name)}")
        _cast_macro(cur, schema, ddl.new_name or "")
        _recheck_tables(cur, schema, ddl.new_name or "", users)  # their CHECKs name it
        return
    if ddl.action in ("set_default", "drop_default"):
        _, _, _, duck_type, before, _ = _need(cur, ddl)
        default = ddl.default if ddl.action == "set_default" else None
        after = None if default is None else _rendered_default(cur, duck_type, default)
        cur.execute(
            f"UPDATE {DOMAINS} SET default_pg = ?, default_duck = ? WHERE schema_name = ? "
            "AND name = ?",
            [default, after, *where],
        )
        # the columns whose default was the domain's (or none) follow it, as in PostgreSQL
        for user in _users(cur, schema, name):
            current = cur.execute(
                "SELECT column_default FROM system.main.duckdb_columns() WHERE table_oid = ? "
                "AND column_name = ?",
                [user[3], user[7]],
            ).fetchone()
            if current is None or current[0] not in (None, before):
                continue
            target = f"{alter_rebuild.Table(*user[:7]).qualified()} ALTER COLUMN {quote(user[7])}"
            change = "DROP DEFAULT" if after is None else f"SET DEFAULT {after}"
            constraint_ddl.alter_around_indexes(cur, f"ALTER TABLE {target} {change}")
        return
    if ddl.action in ("set_not_null", "drop_not_null"):
        cur.execute(
            f"UPDATE {DOMAINS} SET not_null = ? WHERE schema_name = ? AND name = ?",
            [ddl.action == "set_not_null", *where],
        )
    elif ddl.action == "add_constraint":
        _add_check(cur, schema, name, ddl.checks[0])
    elif ddl.action in ("drop_constraint", "rename_constraint"):
        found = cur.execute(
            f"SELECT count(*) FROM {CHECKS} WHERE schema_name = ? AND domain_name = ? "
            "AND conname = ?",
            [*where, ddl.target],
        ).fetchone()[0]
        if not found:
            if ddl.if_exists:
                notices.append(
                    f'constraint "{ddl.target}" of domain "{name}" does not exist, skipping'
                )
                return
            raise PgError("42704", f'constraint "{ddl.target}" of domain "{name}" does not exist')
        if ddl.action == "drop_constraint":
            cur.execute(
                f"DELETE FROM {CHECKS} WHERE schema_name = ? AND domain_name = ? AND conname = ?",
                [*where, ddl.target],
            )
        else:
            cur.execute(
                f"UPDATE {CHECKS} SET conname = ? WHERE schema_name = ? AND domain_name = ? "
                "AND conname = ?",
                [ddl.new_name, *where, ddl.target],
            )
    _cast_macro(cur, schema, name)
    _recheck_tables(cur, schema, name)


def _cast_macro(cur: Any, schema: str, name: str) -> None:
    """(Re)make the macro a cast to the domain becomes (proxy/pgserver/domain_casts.py)."""
    duck_type, not_null, base, typmod = cur.execute(
        f"SELECT duck_type, not_null, base, base_typmod FROM {DOMAINS} WHERE schema_name = ? "
        "AND name = ?",
        [schema, name],
    ).fetchone()
    checks = cur.execute(
        f"SELECT conname, expr_duck FROM {CHECKS} WHERE schema_name = ? AND domain_name = ? "
        "ORDER BY conname",
        [schema, name],
    ).fetchall()
    rows = [tuple(c) for c in checks]
    limit = _length(base, typmod)
    body = cast_macro(f"{schema}.{name}", _shown(schema, name), duck_type, rows, not_null, limit)
    cur.execute(f"CREATE OR REPLACE MACRO main.{macro_name(schema, name)}(v) AS {body}")
    domain_casts.changed()


def _recheck_tables(
    cur: Any, schema: str, name: str, users: list[tuple[Any, ...]] | None = None
) -> None:
    """Each table whose columns use the domain (`users`: found before a rename), re-created
    once with the domain's CHECKs as they are now (its rows are checked again)."""
    tables: dict[int, list[tuple[Any, ...]]] = {}
    for user in _users(cur, schema, name) if users is None else users:
        tables.setdefault(user[3], []).append(user)
    for users in tables.values():
        table = alter_rebuild.Table(*users[0][:7])
        added = tuple(f"CHECK ({column_check_for(cur, schema, name, u[7])})" for u in users)
        try:
            constraint_ddl.replace_checks(cur, table, added, frozenset(u[8] for u in users))
        except duckdb.ConstraintException as exc:
            column = next((u[7] for u in users if f'"{u[7]}"' in str(exc)), users[0][7])
            if "does not allow null values" in str(exc):
                raise PgError(
                    "23502", f'column "{column}" of table "{table.name}" contains null values'
                ) from None
            raise PgError(
                "23514",
                f'column "{column}" of table "{table.name}" contains values that violate the '
                "new constraint",
            ) from None


def _length(base: str, typmod: int) -> int | None:
    """n of a varchar(n) / char(n) base type, else None."""
    word = base.split("(")[0].strip().lower()
    chars = ("varchar", "character varying", "char", "character", "bpchar")
    return typmod - 4 if word in chars and typmod >= 4 else None


def column_check_for(cur: Any, schema: str, name: str, column: str) -> str:
    """The table CHECK (its expression) of `column` of domain schema.name."""
    not_null, base, typmod = cur.execute(
        f"SELECT not_null, base, base_typmod FROM {DOMAINS} WHERE schema_name = ? AND name = ?",
        [schema, name],
    ).fetchone()
    checks = cur.execute(
        f"SELECT conname, expr_duck FROM {CHECKS} WHERE schema_name = ? AND domain_name = ? "
        "ORDER BY conname",
        [schema, name],
    ).fetchall()
    shown = _shown(schema, name)
    rows = [tuple(c) for c in checks]
    limit = _length(base, typmod)
    return column_check(f"{schema}.{name}", shown, column, rows, not_null, limit)
