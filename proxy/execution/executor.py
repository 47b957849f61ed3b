"""The in-process SQL executor that MCP and REST use: the same path as wire SQL.

A statement is transpiled, checked against the caller's policy, its agent functions,
agent relations and semantic markers resolved, and run on a fresh DuckDB connection;
each statement commits on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.access import ownership, sql_policy
from proxy.core.identity import Identity
from proxy.core.notify_hub import check_notify
from proxy.core.notify_hub import scope as notify_scope
from proxy.db import backend_functions, notify_functions, row_triggers, vacuum
from proxy.db.catalog import org_scope
from proxy.db.commit_clock import statement_may_write
from proxy.db.duckdb_errors import map_duckdb_error
from proxy.execution.sql_bridge import (
    arg_queries,
    first_marker_param,
    prepare,
    query_rows,
    register,
    relation_rows,
    unregister,
)
from proxy.wire.errors import PgError
from transpiler import TranspileError, transpile
from transpiler.model import UtilityCommand
from transpiler.notify_statements import NotifyStatement

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer
    from proxy.db.engine import Engine


READ_KINDS = frozenset({"select", "show", "explain"})


async def execute_sql(
    layer: AgentLayer, who: Identity, sql: str, *, read_only: bool = False
) -> tuple[list[str], list[tuple]]:
    """Run SQL in-process as `who` (MCP over HTTP, REST): the last statement's result.

    The same path as the wire: transpiled, agent functions, agent relations and
    semantic markers resolved, on a fresh DuckDB connection. Each
    statement commits on its own. read_only refuses anything but reads (25006).
    """
    if row_triggers.may_fire(layer.engine, sql):  # BEFORE ROW triggers, as on the wire
        sql = await layer.engine.run_uncounted(row_triggers.apply_on, layer.engine, sql)
    try:
        # no wire session here: a CREATE TABLE's foreign keys stay DuckDB's own
        statements = tuple(st.native() for st in transpile(sql))
    except TranspileError as exc:
        raise PgError(exc.sqlstate, exc.message, position=exc.position) from exc
    for st in statements:
        if read_only and st.kind not in READ_KINDS:
            raise PgError("25006", f"read-only: {st.tag or st.kind} statements are refused")
        sql_policy.check(st, who)  # read-only keys, server files
    engine = layer.engine
    semantic = layer.semantic
    # Reads never count on the commit clock (a wire session's savepoint replay): only a
    # statement that may write does (runner.py's rule).
    cur = await engine.run_uncounted(engine.cursor)
    if not who.superuser:  # its catalogs list only its organisation's objects
        await engine.run_uncounted(org_scope.scope_to, cur, who.org_id)
    # pg_notify()'s calls reach `port`; published per statement (each commits alone)
    with notify_functions.detached() as (token, port):
        try:
            await engine.run_uncounted(cur.execute, backend_functions.token_sql(token))
            result: tuple[list[str], list[tuple]] = ([], [])
            for st in statements:
                if isinstance(st.command, NotifyStatement) and st.command.verb == "NOTIFY":
                    _notify(engine, who, st.command)  # each statement commits on its own here
                    result = ([], [])
                    continue
                if isinstance(st.command, UtilityCommand) and st.command.targets:
                    await engine.run_uncounted(_vacuum, cur, st.command)  # VACUUM t, ...
                    result = ([], [])
                    continue
                if st.command is not None:
                    raise PgError("0A000", f"{st.tag} needs a wire connection; it is refused here")
                queries = None
                if arg_queries(st):  # subquery arguments: their rows, on this cursor
                    queries = await engine.run_uncounted(query_rows, cur, who, st, None)
                relations = await prepare(layer, who, st, [], read_only=read_only, queries=queries)
                shown = list(st.agent_relations)
                if shown:  # the caller's own rows, for this statement only
                    relations += await relation_rows(layer, who, shown)
                semantic.check(st)
                params: list[Any] = await semantic.vectors(st) if st.bind_texts else []
                text = st.bind_sql(first_marker_param(st))

                def run(
                    text: str = text,
                    params: list[Any] = params,
                    relations=relations,
                    shown=shown,
                    st=st,
                ):
                    register(cur, relations)
                    # Owners and system objects, as on the wire (proxy/access/ownership.py).
                    changes = (
                        ownership.guard(cur, st, who, None) if ownership.needs_guard(st) else []
                    )
                    if "fts_main_" in text:
                        semantic.ensure_fts_indexes(cur, text)
                    cur.execute(text, params) if params else cur.execute(text)
                    if ownership.needs_guard(st):
                        ownership.after(cur, st, changes)
                    if cur.description is None:
                        out: tuple[list[str], list[tuple]] = ([], [])
                    else:
                        out = [d[0] for d in cur.description], cur.fetchall()
                    unregister(cur, shown)
                    return out

                writes = statement_may_write(st, text, "fts_main_" in text)
                try:
                    result = await (engine.run if writes else engine.run_uncounted)(run)
                except duckdb.Error as exc:
                    raise map_duckdb_error(exc, text) from None
                if sent := port.take():  # the statement committed on its own: they go now
                    engine.notify_hub.publish(
                        notify_scope(engine.database_name, who.org_id), sent, 0
                    )
            return result
        finally:
            await engine.run_uncounted(cur.close)


def _notify(engine: Engine, who: Identity, cmd: NotifyStatement) -> None:
    """NOTIFY over MCP / REST: delivered at once to the wire listeners of the caller's
    organisation, with process id 0 (there is no backend to name)."""
    try:
        check_notify(cmd.channel or "", cmd.payload)
    except ValueError as exc:
        raise PgError("22023", str(exc)) from None
    engine.notify_hub.publish(
        notify_scope(engine.database_name, who.org_id), [(cmd.channel or "", cmd.payload)], 0
    )


def _vacuum(cur: duckdb.DuckDBPyConnection, command: UtilityCommand) -> None:
    """VACUUM / ANALYZE of named relations (proxy/db/vacuum.py); no WARNINGs here."""
    cur.begin()
    try:
        steps = vacuum.plan(cur, command.name, command.targets)
    finally:
        cur.rollback()
    for kind, sql in steps:
        if kind == "sql":
            cur.execute(sql)
