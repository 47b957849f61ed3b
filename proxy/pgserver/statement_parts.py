"""One PostgreSQL statement the transpiler makes several (a several-action ALTER TABLE:
transpiler/alter_actions.py) over the extended protocol, where one Parse holds one
statement: the Parse keeps the parts, the Execute runs them in order, the last one as
the portal's own (its tag is the client's one CommandComplete). Outside a transaction
block they share one, so an error in any part leaves none done, as in PostgreSQL
(LangGraph's PostgresStore migrations send `ALTER TABLE store ADD COLUMN IF NOT EXISTS
expires_at ..., ADD COLUMN IF NOT EXISTS ttl_minutes INT` through psycopg)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from proxy.pgserver.portal import Portal
from proxy.wire.errors import PgError
from transpiler import Statement

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession as Session
    from proxy.pgserver.contexts import StatementRunner as Runner


def split(statements: Sequence[Statement]) -> tuple[tuple[Statement, ...], Statement | None]:
    """(the parts before the last, the last) of one Parse's statements; 42601 for the
    statements of several PostgreSQL statements, or parts that take parameters."""
    if len(statements) > 1 and (
        len({s.source for s in statements}) > 1 or any(s.param_count for s in statements)
    ):
        raise PgError("42601", "cannot insert multiple commands into a prepared statement")
    return tuple(statements[:-1]), (statements[-1] if statements else None)


async def run(
    runner: Runner, session: Session, portal: Portal, parts: Sequence[Statement], max_rows: int
) -> None:
    """The parts with their output unsent (NOTICEs pass), then the portal's statement."""
    own = runner.txn_status == "I" and not runner.implicit
    if own:
        await runner.begin_implicit()
    out = session.out

    def notices_only(data: bytes | memoryview) -> None:
        if isinstance(data, bytes) and data[:1] == b"N":
            out(data)

    try:
        session.out = notices_only
        try:
            for st in parts:
                await runner.execute(
                    Portal(st, [], (), sql=st.sql), session, max_rows=0, describe=False
                )
        finally:
            session.out = out
        await runner.execute(portal, session, max_rows=max_rows, describe=False)
    except PgError:
        if own:
            await runner.statement_failed()
        raise
    if own:
        await runner.end_implicit()
