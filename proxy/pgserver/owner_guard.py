"""Object owners and system objects around a statement (proxy/access/ownership.py): who
may create, change or drop what, checked before the statement runs and recorded after."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from proxy.access import ownership
from proxy.pgserver import owner_outcome

if TYPE_CHECKING:
    from proxy.core.identity import Identity
    from proxy.pgserver.contexts import StatementRunner
    from proxy.pgserver.portal import Portal
    from proxy.pgserver.savepoint_log import SavepointState


async def guarded(
    runner: StatementRunner,
    who: Identity | None,
    portal: Portal,
    savepoints: SavepointState,
    work: Callable[[], Awaitable[None]],
) -> None:
    """Run `work` (the portal's statement) under the ownership rules for `who`; owner
    records follow the transaction's outcome (proxy/pgserver/owner_outcome.py)."""
    st = portal.statement
    assert st is not None
    if portal.executed and st.command is None:
        # Ran already (its Describe, or an Execute before a row limit): nothing to check
        # before it, and no owner record or transaction command after it.
        try:
            await work()
        except BaseException:
            owner_outcome.block_ended(runner, committed=False)
            raise
        return
    changes = None
    if who is not None and not portal.executed and ownership.needs_guard(st):
        # On this connection's cursor: it sees the objects as the statement will, its
        # own temp ones too.
        await runner.take_cursor()
        path = runner.settings.values.get("search_path")
        owners = runner.pending_owners  # with this block's uncommitted changes
        changes = await runner.call(ownership.guard, runner.cursor, st, who, path, owners)
    failed = runner.txn_status == "E"
    try:
        await work()
    except BaseException:
        owner_outcome.block_ended(runner, committed=False)  # a COMMIT that failed
        raise
    owner_outcome.after(runner, st, failed, savepoints.writes)
    if changes is not None and (changes or ownership.changes_definitions(st)):
        record = owner_outcome.recorder(runner, savepoints.writes)
        await runner.call(ownership.after, runner.cursor, st, changes, record)
    elif st.kind in ("rollback", "savepoint") and ownership.stored_sql.dirty:
        await runner.call(ownership.after_rollback, runner.cursor)
