"""SAVEPOINT / RELEASE / ROLLBACK TO, emulated over DuckDB (which has no subtransactions).

Drivers use savepoints even when the user never asks for one: psycopg's
`conn.transaction()` inside a transaction (SQLAlchemy's psycopg dialect does it
at connect, via `TypeInfo.fetch`), JDBC's autosave, Django's atomic blocks. Most of
those savepoints wrap reads and are released, which we can honour exactly:

- SAVEPOINT and RELEASE only keep the stack of names.
- ROLLBACK TO succeeds when nothing written after the savepoint needs undoing:
  with no writes since it (and no error) it is a no-op; when the whole transaction
  has written nothing, the DuckDB transaction is restarted (this also clears an
  error). Otherwise it fails with 0A000 rather than silently keeping the changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.model import TransactionCommand

if TYPE_CHECKING:
    from proxy.runner import Runner
    from proxy.session import Session

READ_KINDS = frozenset({"select", "show", "explain", "set", "reset", "savepoint"})


@dataclass
class SavepointState:
    writes: int = 0  # statements in this transaction that may have changed data
    names: list[str] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)  # `writes` when each savepoint was set


def _state(session: Session) -> SavepointState:
    found = getattr(session, "savepoints", None)
    if found is None:
        found = SavepointState()
        session.savepoints = found  # type: ignore[attr-defined]
    return found


def note_statement(session: Session, st: Statement) -> None:
    """Count statements that may write, so ROLLBACK TO knows whether it can be honoured."""
    if st.kind not in READ_KINDS and st.command is None:
        _state(session).writes += 1


def reset(session: Session) -> None:
    """The transaction ended: forget its savepoints and writes."""
    state = _state(session)
    state.writes = 0
    state.names.clear()
    state.marks.clear()


def _find(state: SavepointState, name: str | None) -> int:
    for i in range(len(state.names) - 1, -1, -1):
        if state.names[i] == name:
            return i
    raise PgError("3B001", f'savepoint "{name}" does not exist')


async def run(runner: Runner, session: Session, cmd: TransactionCommand) -> str:
    state = _state(session)
    in_block = runner.txn_status != "I" or runner._implicit
    if cmd.action == "savepoint":
        if not in_block:
            raise PgError("25P01", "SAVEPOINT can only be used in transaction blocks")
        state.names.append(cmd.savepoint or "")
        state.marks.append(state.writes)
        return "SAVEPOINT"
    if not in_block:
        word = "RELEASE SAVEPOINT" if cmd.action == "release" else "ROLLBACK TO SAVEPOINT"
        raise PgError("25P01", f"{word} can only be used in transaction blocks")
    i = _find(state, cmd.savepoint)
    if cmd.action == "release":
        del state.names[i:], state.marks[i:]
        return "RELEASE"
    # ROLLBACK TO: the savepoint itself stays, later ones go.
    failed = runner.txn_status == "E"
    if failed or state.writes > state.marks[i]:
        if state.writes:
            raise PgError(
                "0A000",
                "ROLLBACK TO SAVEPOINT cannot undo changes made after the savepoint: "
                "DuckDB has no subtransactions",
                hint="Roll back the whole transaction.",
            )
        # Nothing written in the whole transaction: restarting it loses nothing.
        await runner.call(runner.cursor.rollback)
        await runner.call(runner.cursor.begin)
        if failed:
            runner.txn_status = "T"
    del state.names[i + 1 :], state.marks[i + 1 :]
    return "ROLLBACK"
