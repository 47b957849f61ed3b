"""Object owners and system objects around a statement (proxy/access/ownership.py): who
may create, change or drop what, checked before the statement runs and recorded after."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from proxy.access import ownership

if TYPE_CHECKING:
    from proxy.core.identity import Identity
    from proxy.pgserver.contexts import StatementRunner
    from proxy.pgserver.portal import Portal


async def guarded(
    runner: StatementRunner,
    who: Identity | None,
    portal: Portal,
    work: Callable[[], Awaitable[None]],
) -> None:
    """Run `work` (the portal's statement) under the ownership rules for `who`."""
    st = portal.statement
    assert st is not None
    changes = None
    if who is not None and not portal.executed and ownership.needs_guard(st):
        # On this connection's cursor: it sees the objects as the statement will, its
        # own temp ones too.
        await runner.take_cursor()
        path = runner.settings.values.get("search_path")
        changes = await runner.call(ownership.guard, runner.cursor, st, who, path)
    await work()
    if changes is not None and (changes or ownership.changes_definitions(st)):
        await runner.call(ownership.after, runner.cursor, st, changes)
    elif st.kind in ("rollback", "savepoint") and ownership.stored_sql.dirty:
        await runner.call(ownership.after_rollback, runner.cursor)
