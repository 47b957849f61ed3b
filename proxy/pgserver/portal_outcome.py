"""What a statement started on DuckDB leaves behind (Runner._start's steps after the
plan): the wait for a journaled agent write to be durable, the savepoint record of a
write in an explicit block, and the result kept on the portal for Execute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from proxy.core import durability
from proxy.core.errors import AgentError
from proxy.db.commit_clock import OpenWrite
from proxy.execution.sql_bridge import to_pg_error
from proxy.pgserver import call_shortcut, savepoints, statement_start
from proxy.pgserver.portal import Portal
from proxy.pgserver.result_shape import postgres_names
from proxy.pgserver.results import Column
from proxy.pgserver.statement_start import PREFETCH_ROWS

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession


class Starter(statement_start.Planner, Protocol):
    """What `run_durably` uses of the connection's Runner (runner.py)."""

    write: OpenWrite

    async def run_plan(
        self, plan: statement_start.StartPlan, portal: Portal
    ) -> statement_start.Outcome: ...


async def run_durably(
    runner: Starter, portal: Portal, session: ClientSession
) -> tuple[statement_start.StartPlan, tuple[Column, ...] | None, list[tuple] | None]:
    """Plan and run the portal's statement; sets portal.count.

    A journaled agent write's fsync overlaps the statement's DuckDB work; it is waited
    for before anything is answered (core/durability.py).
    """
    assert portal.statement is not None
    try:
        # Only agent calls make journaled writes (a wait outside deferred() is simply
        # waited for at once); other statements skip the bookkeeping.
        if not portal.statement.agent_calls:
            return await _run(runner, portal, session)
        with durability.deferred():
            return await _run(runner, portal, session)
    except AgentError as exc:  # the write could not be made durable
        raise to_pg_error(exc) from None


async def _run(
    runner: Starter, portal: Portal, session: ClientSession
) -> tuple[statement_start.StartPlan, tuple[Column, ...] | None, list[tuple] | None]:
    plan = await statement_start.plan(runner, portal, session)
    if plan.writes and runner.txn_status == "I":
        runner.write.begin()
    if plan.st.agent_calls:  # a statement that is exactly the call answers from its rows
        cols, portal.count, head = await call_shortcut.run(runner, plan, portal)
    else:
        cols, portal.count, head = await runner.run_plan(plan, portal)
    return plan, cols, head


def record_write(
    plan: statement_start.StartPlan,
    portal: Portal,
    session: ClientSession,
    head: list[tuple] | None,
) -> None:
    """A write in an explicit block, logged for ROLLBACK TO SAVEPOINT (savepoints.py)."""
    effect = savepoints.side_effect(
        plan.st, bool(plan.relations), plan.needs_fts, plan.branch is not None
    )
    rows = portal.count
    if rows is None and head is not None and (len(head) < PREFETCH_ROWS or plan.fk.active):
        rows = len(head)  # INSERT ... RETURNING: every row fetched already
    savepoints.record(
        session.savepoints,
        session.settings.values,
        plan.st,
        plan.ran[0],
        plan.params,
        effect,
        rows,
    )


def keep_result(
    plan: statement_start.StartPlan,
    portal: Portal,
    cols: tuple[Column, ...] | None,
    head: list[tuple] | None,
) -> bool:
    """The portal holds the result: its columns, first rows, or Arrow stream. True when
    the portal now owns the cursor (it has rows to send)."""
    st = plan.st
    portal.columns = cols if st.kind == "explain" else postgres_names(st, cols)
    portal.executed = True
    if head is not None:
        portal.buffered = head
        portal.drained = len(head) < PREFETCH_ROWS or plan.fk.active
    if plan.arrow:  # read through Arrow: the whole result in `head`, or the stream
        portal.arrow = plan.arrow[0]
        portal.drained = plan.arrow[0] is None
    if portal.columns is not None:
        return True
    portal.done = True
    return False
