"""The server's foreign keys (foreign_keys.py) around one statement the runner runs.

A write whose SQL names a table of a foreign key is checked right after it, in the same
transaction; outside any transaction the statement gets one of its own, so a violation
undoes it. DDL may change keys or drop their tables: the registry is read again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

import duckdb

from proxy.pgserver import alter_rebuild, foreign_keys, identity_ddl, triggers, view_deps
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.ddl_targets import cascades, targets

T = TypeVar("T")


class WriteCheck:
    """Foreign keys checked after one DML statement, on the worker thread."""

    def __init__(
        self, st: Statement, sql: str, *, enabled: bool, autocommit: bool, in_block: bool
    ) -> None:
        """`enabled`: DML outside a branch (a branch checks its own copies); `autocommit`:
        no transaction is open, so the check needs one of its own; `in_block`: the client
        BEGAN a block, which checks DEFERRABLE INITIALLY DEFERRED keys at COMMIT."""
        self.kind = st.kind
        self.sql = sql
        self.enabled = enabled
        self.autocommit = autocommit
        self.in_block = in_block
        # Known once run() has read the keys: the statement touches a key's table.
        self.active = enabled

    def run(self, cur: duckdb.DuckDBPyConnection, work: Callable[[], T]) -> T:
        """Run `work` (the statement), then check and carry out the keys it touches."""
        self.active = self.enabled and foreign_keys.touched(foreign_keys.load(cur), self.sql)
        own_txn = self.active and self.autocommit
        if own_txn:
            cur.begin()
        try:
            out = work()
            if self.active:
                foreign_keys.after_write(cur, self.sql, self.kind, not self.in_block)
            if own_txn:
                cur.commit()
        except BaseException:
            if own_txn:
                with contextlib.suppress(duckdb.Error):
                    cur.rollback()
            raise
        return out


async def after_ddl(
    call: Callable[..., Awaitable[Any]], cur: duckdb.DuckDBPyConnection, st: Statement, sql: str
) -> None:
    """After DDL ran: constraint names and keys are read again; they follow a renamed table
    or column, and go with a dropped table or column; declared identity columns are
    recorded."""
    foreign_keys.changed()
    if st.tag in triggers.FOLLOWING_TAGS:  # triggers follow a renamed table, go with a dropped one
        await call(triggers.after_ddl, cur, st.tag, sql)
    if st.identity is not None:
        await call(identity_ddl.record, cur, st.identity)
    if st.tag == "ALTER TABLE" and " RENAME " in sql.upper():
        await call(foreign_keys.follow_rename, cur, sql)
        await call(view_deps.follow_rename, cur, sql)  # the views over a renamed table
    if st.tag == "ALTER TABLE" and " DROP " in sql.upper():  # an identity column's sequence
        await call(identity_ddl.drop_sequences_of_dropped, cur)
    if st.tag in ("DROP TABLE", "DROP SCHEMA", "ALTER TABLE"):
        await call(foreign_keys.forget_dropped, cur)


def check_drop(cur: duckdb.DuckDBPyConnection, st: Statement) -> list[str]:
    """DROP TABLE of a table that another table's foreign key references: 2BP01, as in
    PostgreSQL, unless CASCADE, which drops those keys (the NOTICEs it answers say which).
    Dropping the referencing table in the same statement is fine."""
    fks = foreign_keys.load(cur)
    if not fks:
        return []
    dropped: set[tuple[str, str]] = set()
    for t in targets(st.sql) or ():
        if t.action == "drop" and t.kind == "table" and not t.catalog:
            table = alter_rebuild.resolve_table(
                cur, alter_rebuild.TableName(t.name, t.schema or None)
            )
            if table is not None and not table.temporary:
                dropped.add((table.schema.lower(), table.name.lower()))
    needed = [
        fk
        for fk in fks
        if (fk.ref_schema.lower(), fk.ref_table.lower()) in dropped
        and (fk.schema.lower(), fk.table.lower()) not in dropped
    ]
    if not needed:
        return []
    lines = [f"constraint {fk.name} on table {fk.table}" for fk in needed]
    if cascades(st.sql):
        if len(lines) == 1:
            return [f"drop cascades to {lines[0]}"]
        return [f"drop cascades to {len(lines)} other objects"]
    first = needed[0].ref_table
    raise PgError(
        "2BP01",
        f"cannot drop table {first} because other objects depend on it",
        detail="\n".join(
            f"{line} depends on table {fk.ref_table}"
            for line, fk in zip(lines, needed, strict=True)
        ),
        hint="Use DROP ... CASCADE to drop the dependent objects too.",
    )


def check_truncate(cur: duckdb.DuckDBPyConnection, st: Statement) -> tuple[Statement, list[str]]:
    """TRUNCATE of a table that another table's foreign key references, the other not
    truncated with it: 0A000, as in PostgreSQL (it left the children without parents).
    With CASCADE those tables are truncated too, in the same transaction (the statement
    comes back with their TRUNCATEs), and the NOTICEs say which."""
    fks = foreign_keys.load(cur)
    if not fks:
        return st, []
    named: set[tuple[str, str]] = set()
    for t in targets(st.sql) or ():
        table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(t.name, t.schema or None))
        if t.action == "write" and table is not None and not table.temporary:
            named.add((table.schema.lower(), table.name.lower()))
    todo, extra = list(named), []
    while todo:
        parent = todo.pop()
        for fk in fks:
            child = (fk.schema.lower(), fk.table.lower())
            if (fk.ref_schema.lower(), fk.ref_table.lower()) != parent or child in named:
                continue
            if not st.truncate_cascade:
                raise PgError(
                    "0A000",
                    "cannot truncate a table referenced in a foreign key constraint",
                    detail=f'Table "{fk.table}" references "{fk.ref_table}".',
                    hint=f'Truncate table "{fk.table}" at the same time, or use TRUNCATE ... CASCADE.',
                )
            named.add(child)
            todo.append(child)
            extra.append(fk)
    if not extra:
        return st, []
    more = tuple((fk.schema, fk.table) for fk in extra)
    return replace(
        st,
        sql="; ".join([st.sql, *(f"TRUNCATE TABLE {fk.child()}" for fk in extra)]),
        atomic=True,
        restart_identity=st.restart_identity + more if st.restart_identity else (),
    ), [f'truncate cascades to table "{fk.table}"' for fk in extra]
