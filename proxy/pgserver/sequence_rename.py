"""ALTER SEQUENCE ... RENAME TO, which DuckDB 1.5 lacks (the request:
transpiler/sequence_rename.py). The server makes the sequence again under the new name at
the same state (options, last value drawn, comment), points the column defaults that draw
from it at the new name (a serial column keeps counting; pg_get_serial_sequence and
pg_depend name the new one) and drops the old one, in one transaction (the client's when
one is open). Rails' `rename_table` renames the sequence and then the primary key's index with `ALTER
TABLE old_id_seq RENAME TO new_id_seq`, `ALTER TABLE old_pkey RENAME TO new_pkey`: ALTER
TABLE naming a sequence or an index (PostgreSQL renames any relation so) is handled here
too (an index: as ALTER INDEX, proxy/pgserver/index_rename.py / constraint_names.py).

Errors as PostgreSQL 15: 42P01 for a missing sequence (IF EXISTS: a NOTICE), 42P07 when
the name is taken in its schema. What differs: a sequence tied to its table by DuckDB
(`ALTER SEQUENCE ... OWNED BY` of a name other than `<table>_<column>_seq`) cannot be
dropped while its table exists, so it cannot be renamed (0A000).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.core.sqltext import quote_ident
from proxy.pgserver import alter_rebuild, constraint_names, index_rename, set_schema
from proxy.pgserver.constraint_ddl import alter_around_indexes
from proxy.pgserver.sequence_restart import MAX_DRAWS, dependents, split_name
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.sequence_rename import SequenceRename, parse

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

_PLAIN = re.compile(r"^[a-z_][a-z0-9_$]*$")
_NEXTVAL_ARG = re.compile(r"(nextval\(')((?:[^']|'')+)(')", re.IGNORECASE)


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out the portal's ALTER SEQUENCE ... RENAME TO; False for any other ALTER."""
    st = portal.statement
    assert st is not None
    request = parse(st.sql)
    if request is None:
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    if request.as_table:  # ALTER TABLE naming a sequence or an index; else not ours
        kind = await runner.call(_kind, runner.cursor, request)
        if kind == "index":
            old = (
                f"{quote_ident(request.schema)}.{quote_ident(request.name)}"
                if request.schema
                else quote_ident(request.name)
            )
            if not await runner.call(
                constraint_names.rename_index, runner.cursor, old, request.new_name, in_block
            ):
                await runner.call(
                    index_rename.rename, runner.cursor, old, request.new_name, in_block
                )
            runner.param_types.invalidate()
            session.out(m.command_complete("ALTER TABLE"))
            return True
        if kind != "sequence":
            return False
    notice = await runner.call(rename, runner.cursor, request, in_block)
    if notice:
        session.send_notice(notice)
    runner.param_types.invalidate()
    session.out(m.command_complete("ALTER TABLE" if request.as_table else "ALTER SEQUENCE"))
    return True


def _kind(cur: duckdb.DuckDBPyConnection, req: SequenceRename) -> str | None:
    """ "sequence" or "index" when ALTER TABLE names one (and no table or view), else None."""
    schema = "main" if req.schema == "public" else req.schema
    if set_schema.find_relation(cur, "table", req.name, schema) is not None:
        return None  # a table or a view: DuckDB's (and the server's other handlers')
    if set_schema.find_relation(cur, "sequence", req.name, schema) is not None:
        return "sequence"
    found = cur.execute(
        f"SELECT 1 FROM {PG_SCHEMA}.__hati_index_list WHERE index_name = ? "
        "AND (? IS NULL OR schema_name = ?) AND database_name = system.main.current_database()",
        [req.name, schema, schema],
    ).fetchone()
    return "index" if found else None


def rename(cur: duckdb.DuckDBPyConnection, req: SequenceRename, in_block: bool) -> str | None:
    """Rename the sequence; the NOTICE when IF EXISTS skips a missing one."""
    schema = "main" if req.schema == "public" else req.schema
    found = set_schema.find_relation(cur, "sequence", req.name, schema)
    if found is None:
        if req.if_exists:
            return f'relation "{req.name}" does not exist, skipping'
        raise PgError("42P01", f'relation "{req.name}" does not exist')
    _, database, where = found
    if req.new_name == req.name:
        raise PgError("42P07", f'relation "{req.new_name}" already exists')
    if set_schema.name_taken(cur, database, where, req.new_name):
        raise PgError("42P07", f'relation "{req.new_name}" already exists')
    with alter_rebuild.own_transaction(cur, in_block):
        copy_sequence(cur, database, where, req.name, req.new_name)
        deps = dependents(cur, where, req.name) if database != "temp" else []
        for t_schema, table, column, default in deps:
            alter_around_indexes(
                cur,
                f"ALTER TABLE {quote_ident(t_schema)}.{quote_ident(table)} "
                f"ALTER COLUMN {quote_ident(column)} "
                f"SET DEFAULT {_repointed(default, req.name, req.new_name)}",
            )
        old = f"{quote_ident(database)}.{quote_ident(where)}.{quote_ident(req.name)}"
        try:
            cur.execute(f"DROP SEQUENCE {old}")
        except duckdb.DependencyException as e:
            raise PgError(
                "0A000",
                f'cannot rename sequence "{req.name}": DuckDB ties it to its table '
                "(OWNED BY), and it cannot be dropped while that table exists",
            ) from e
    return None


def _repointed(default: str, old: str, new: str) -> str:
    """The default with each nextval('[schema.]old') drawing from `new` instead."""

    def swap(mt: re.Match[str]) -> str:
        schema, name = split_name(mt[2].replace("''", "'"))
        if name != old:
            return mt[0]
        text = _name(new) if schema is None else f"{_name(schema)}.{_name(new)}"
        return f"{mt[1]}{text.replace(chr(39), chr(39) * 2)}{mt[3]}"

    return _NEXTVAL_ARG.sub(swap, default)


def _name(name: str) -> str:
    """A name as PostgreSQL prints it in a nextval default: quoted only when it must be."""
    return name if _PLAIN.match(name) else quote_ident(name)


def copy_sequence(cur: Any, database: str, schema: str, name: str, new: str) -> None:
    """Sequence `new` beside `name` at the same state: its options, drawn up to the value
    `name` gave last (as setval does, so pg_sequences shows the same), its comment."""
    start, inc, low, high, cycle, last, comment = cur.execute(
        "SELECT start_value, increment_by, min_value, max_value, cycle, last_value, comment "
        "FROM system.main.duckdb_sequences() WHERE database_name = ? AND schema_name = ? "
        "AND sequence_name = ?",
        [database, schema, name],
    ).fetchone()
    seq = f"{quote_ident(database)}.{quote_ident(schema)}.{quote_ident(new)}"
    draws = 0 if last is None else (last - start) // inc + 1
    at = start if 0 < draws <= MAX_DRAWS or last is None else last
    cur.execute(
        f"CREATE SEQUENCE {seq} INCREMENT BY {inc} MINVALUE {low} MAXVALUE {high} "
        f"START WITH {at} {'CYCLE' if cycle else 'NO CYCLE'}"
    )
    if last is not None:
        n = draws if at == start else 1
        quoted = seq.replace("'", "''")
        cur.execute(f"SELECT count(nextval('{quoted}')) FROM range({n})")
    if comment is not None:
        literal = "'" + comment.replace("'", "''") + "'"
        cur.execute(f"COMMENT ON SEQUENCE {seq} IS {literal}")
