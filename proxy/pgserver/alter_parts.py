"""A several-action ALTER TABLE (`ALTER TABLE t ADD COLUMN a int, ADD COLUMN b text`) over
the extended protocol: the transpiler makes one ALTER TABLE per action
(transpiler/alter_actions.py), as DuckDB takes one action a statement. One Parse keeps the
last as its statement and the others as `Prepared.before`; its Execute runs those first,
each with the server's ALTER TABLE handling of its own, then the last, all in one
transaction (an implicit one when none is open), with one CommandComplete, as PostgreSQL
answers one statement. psycopg with parameters / prepare=True and asyncpg send DDL so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy.pgserver.portal import Portal

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession


class _Quiet:
    """Stands in for the session while an earlier action runs: its CommandComplete is
    not sent (the statement's one comes from the last action); notices are."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session

    def out(self, data: bytes | memoryview) -> None:
        if data[:1] != b"C":
            self._session.out(data)

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)


async def run_before(session: ClientSession, portal: Portal) -> bool:
    """Run the portal's earlier actions; True when an implicit transaction was begun for
    them (the caller ends it after the last action)."""
    prepared = portal.prepared
    assert prepared is not None
    runner = session.runner
    implicit = runner.txn_status == "I" and not runner.implicit
    if implicit:
        await runner.begin_implicit()
    quiet = _Quiet(session)
    for st in prepared.before:
        await runner.execute(Portal(st, [], (), sql=portal.sql), quiet, max_rows=0, describe=False)  # type: ignore[arg-type]
    return implicit
