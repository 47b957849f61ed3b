"""Agent relations (`_hatidata_x`, the caller's rows of an agent table) and agent table
functions' results, registered on the connection's DuckDB cursor for one statement.

What is registered stays until the next statement runs (a pending result still reads it);
then it is replaced or dropped. The rows come from `execution/sql_bridge.py`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from proxy.execution import relation_cache, sql_bridge
from proxy.wire.errors import PgError

log = logging.getLogger("hatiproxy.runner")
T = TypeVar("T")

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.layer import AgentLayer
    from proxy.core.identity import Identity
    from transpiler import Statement


class ShownRelations:
    """The relations registered on one cursor for its last statement; unchanged rows are
    not registered again (proxy/execution/relation_cache.py)."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection) -> None:
        self.cursor = cursor
        self._shown = relation_cache.ShownRelations()

    def show(self, relations: Sequence[sql_bridge.Relation], settled: bool = False) -> None:
        """On the worker thread: this statement's relations, and no stale ones.
        `settled`: what is registered now stays (a plain query outside a block)."""
        self._shown.show(
            self.cursor,
            relations,
            settled,
            sql_bridge.register,
            sql_bridge.unregister,
            sql_bridge.fill,
            sql_bridge.replace_rows,
        )

    def needed(self, relations: Sequence[sql_bridge.Relation]) -> bool:
        """Whether show(relations) has anything to do (nothing shown, nothing wanted)."""
        return bool(relations) or bool(self._shown)


def empty_for(layer: AgentLayer | None, st: Statement) -> list[sql_bridge.Relation]:
    """Empty relations of the right shape for `st`: Describe and parameter inference
    type the statement's columns and $n without reading anyone's rows."""
    empty = sql_bridge.empty_relations(st) if st.agent_calls else []
    return empty + sql_bridge.empty_agent_relations(layer, st.agent_relations)


async def named_rows(
    layer: AgentLayer | None, who: Identity | None, st: Statement
) -> list[sql_bridge.Relation]:
    """The caller's rows of the agent relations `st` names (none without an agent)."""
    if st.agent_relations and layer is not None and who is not None:
        return await sql_bridge.relation_rows(layer, who, st.agent_relations)
    return []


async def for_statement(
    layer: AgentLayer | None,
    who: Identity | None,
    st: Statement,
    params: Sequence[Any],
    queries: Any = None,
    timeout_ms: int = 0,
    cells: int = 0,
) -> list[sql_bridge.Relation]:
    """Everything `st` reads of the agent layer: its agent functions' results (called on
    the main loop, where the agent layer's asyncio state lives) and its agent relations.
    `queries`: the rows of its subquery arguments, read on the session's cursor.
    `timeout_ms`: the session's statement_timeout (0: none), which bounds the agent calls'
    wait as it bounds DuckDB work (`within_timeout`)."""
    relations: list[sql_bridge.Relation] = []
    if st.agent_calls:
        if layer is None or who is None:
            raise PgError("0A000", "agent functions are not available on this connection")
        # the calls themselves run on the main loop (sql_bridge.prepare)
        relations = await within_timeout(
            timeout_ms, sql_bridge.prepare(layer, who, st, params, queries=queries, cells=cells)
        )
    if st.agent_relations:
        if layer is None or who is None:
            raise PgError("0A000", "agent relations are not available on this connection")
        relations += await sql_bridge.relation_rows(layer, who, st.agent_relations)
    return relations


async def within_timeout(timeout_ms: int, work: Coroutine[Any, Any, T]) -> T:
    """`work` (a statement's agent calls), ended with 57014 as PostgreSQL's statement
    timeout ends a statement. Why: the agent calls wait on the main loop and its queues
    (the memory write batch, the embedding model), outside the watchdog that interrupts
    DuckDB work; under load a store_memory waited for seconds whatever the session's
    statement_timeout said. A write already queued may still commit after the timeout
    (store_memory deduplicates a retry of the same content)."""
    if not timeout_ms:
        return await work
    try:
        return await asyncio.wait_for(work, timeout_ms / 1000)
    except TimeoutError:
        log.warning("agent function calls exceeded statement_timeout (%d ms)", timeout_ms)
        raise PgError(
            "57014",
            "canceling statement due to statement timeout",
            hint="the agent function calls waited too long; the server is busy: retry,"
            " or raise statement_timeout",
        ) from None
