"""SAVEPOINT / RELEASE / ROLLBACK TO, emulated over DuckDB (which has no subtransactions).

Drivers use savepoints even when the user never asks for one: psycopg's
`conn.transaction()` inside a transaction, SQLAlchemy's `begin_nested()`, Django's
nested `atomic()` and `get_or_create`, pgJDBC's `autosave`. The emulation:

- SAVEPOINT and RELEASE only keep the stack of names, each with a mark in the block's
  log of writes (proxy/pgserver/savepoint_log.py).
- ROLLBACK TO with nothing written since the savepoint (and no error) is a no-op.
- Otherwise the DuckDB transaction is rolled back, begun again, and the writes
  recorded before the savepoint are replayed in order (proxy/pgserver/savepoint_replay.py);
  the block then continues, a failed one too, as in Postgres.

A replay must give exactly what Postgres gives, so it is refused (0A000, the block
stays failed) unless provably identical: no other transaction committed a write since
this one began (proxy/db/commit_clock.py), the same session settings, only
INSERT / UPDATE / DELETE / MERGE / TRUNCATE without volatile functions, order-dependent
results or volatile column defaults (transpiler/replay.py), nothing unrecordable
before the savepoint (COPY, cursors, agent functions, semantic SQL), and at most
savepoint_log.MAX_BYTES of recorded statements. With nothing recorded before the
savepoint the transaction is simply restarted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy.db.commit_clock import CLOCK
from proxy.pgserver.savepoint_log import MAX_BYTES, Mark, SavepointState
from proxy.pgserver.savepoint_log import READ_KINDS as READ_KINDS  # the runner's hooks
from proxy.pgserver.savepoint_log import note_statement as note_statement
from proxy.pgserver.savepoint_log import note_unrecorded as note_unrecorded
from proxy.pgserver.savepoint_log import record as record
from proxy.pgserver.savepoint_log import side_effect as side_effect
from proxy.pgserver.savepoint_replay import pin_serials, restore
from proxy.wire.errors import PgError
from transpiler.model import TransactionCommand

if TYPE_CHECKING:
    from proxy.pgserver.contexts import StatementRunner

_CANNOT = "ROLLBACK TO SAVEPOINT cannot undo changes made after the savepoint"
_ROLL_BACK = "Roll back the whole transaction."


def begin(runner: StatementRunner, state: SavepointState) -> None:
    """BEGIN of an explicit block, before DuckDB's: a fresh log, and the commit clock."""
    state.clear()
    if runner.implicit:  # BEGIN inside an implicit block: DuckDB's began earlier
        if runner.write.open:
            state.sticky = "statements before its BEGIN (in the same batch) wrote"
    else:
        state.clock = CLOCK.finished


def before_commit(runner: StatementRunner, state: SavepointState) -> None:
    """COMMIT of an explicit block: its writes land now, which others' replays must know."""
    if state.writes:
        runner.write.begin()


def reset(state: SavepointState) -> None:
    """The transaction ended: forget its savepoints and writes."""
    state.clear()


def _find(state: SavepointState, name: str | None) -> int:
    for i in range(len(state.names) - 1, -1, -1):
        if state.names[i] == name:
            return i
    raise PgError("3B001", f'savepoint "{name}" does not exist')


async def run(runner: StatementRunner, state: SavepointState, cmd: TransactionCommand) -> str:
    in_block = runner.txn_status != "I" or runner.implicit
    if cmd.action == "savepoint":
        if not in_block:
            raise PgError("25P01", "SAVEPOINT can only be used in transaction blocks")
        state.names.append(cmd.savepoint or "")
        state.marks.append(state.mark())
        if (
            runner.txn_status == "T"
            and not state.overflow
            and any(r.rows and not r.pinned for r in state.records)
        ):  # the serial ids its INSERTs drew, for an exact replay (replay_pin.py)
            await runner.take_cursor()
            await runner.call(pin_serials, runner.cursor, state.records)
        return "SAVEPOINT"
    if not in_block:
        word = "RELEASE SAVEPOINT" if cmd.action == "release" else "ROLLBACK TO SAVEPOINT"
        raise PgError("25P01", f"{word} can only be used in transaction blocks")
    i = _find(state, cmd.savepoint)
    if cmd.action == "release":
        del state.names[i:], state.marks[i:]
        return "RELEASE"
    # ROLLBACK TO: the savepoint itself stays, later ones go.
    mark = state.marks[i]
    if runner.txn_status == "E" or state.writes > mark.writes:
        if runner.implicit:
            await _restart_implicit(runner, state)
        else:
            await _undo(runner, state, mark)
    del state.names[i + 1 :], state.marks[i + 1 :]
    return "ROLLBACK"


async def undo_to(runner: StatementRunner, state: SavepointState, name: str, clean: bool) -> None:
    """ROLLBACK TO `name` for a failed DO block (do_blocks.py). `clean`: nothing ran since
    the savepoint but statements that failed and left DuckDB's transaction usable (an
    error before any change: CREATE TYPE that exists), so only the log forgets them."""
    i = _find(state, name)
    mark = state.marks[i]
    if clean:
        state.truncate(mark)
    elif runner.implicit:  # a restart is exact when nothing before the savepoint wrote
        state.truncate(mark)
        await _restart_implicit(runner, state)
    else:
        await _undo(runner, state, mark)
    del state.names[i + 1 :], state.marks[i + 1 :]


def forget(state: SavepointState, name: str) -> None:
    """RELEASE `name` if it is still there (a DO block's own savepoint, on any exit)."""
    for i in range(len(state.names) - 1, -1, -1):
        if state.names[i] == name:
            del state.names[i:], state.marks[i:]
            return


async def _restart_implicit(runner: StatementRunner, state: SavepointState) -> None:
    """An implicit block (several statements in one Query) records nothing: only a
    block that wrote nothing at all can restart."""
    if state.writes:
        raise PgError("0A000", f"{_CANNOT}: DuckDB has no subtransactions", hint=_ROLL_BACK)
    await runner.call(runner.cursor.rollback)
    await runner.call(runner.cursor.begin)


async def _undo(runner: StatementRunner, state: SavepointState, mark: Mark) -> None:
    if state.dead:
        raise PgError(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block",
            detail=state.dead,
            hint=_ROLL_BACK,
        )
    why = _refusal(runner, state, mark)
    if why:
        raise _refused(why)
    records = state.records[: mark.count]
    await runner.take_cursor()  # a suspended portal's rows, read before the rollback
    before = CLOCK.finished
    try:
        why = await runner.call(restore, runner.cursor, records)
    except PgError as exc:
        state.dead = f"replaying its writes for ROLLBACK TO SAVEPOINT failed: {exc.message}"
        raise PgError(
            "40001",
            f"ROLLBACK TO SAVEPOINT could not replay the transaction's earlier writes: "
            f"{exc.message}",
            hint=_ROLL_BACK + " Then retry it.",
        ) from None
    except BaseException:
        state.dead = "replaying its writes for ROLLBACK TO SAVEPOINT failed"
        raise
    if why:  # the DuckDB transaction is empty now; the error fails the block
        raise _refused(why)
    if records and not CLOCK.quiet_since(state.clock or 0):
        state.dead = "another transaction committed a write while the replay ran"
        raise PgError(
            "40001",
            "could not serialize access: another transaction committed a write while "
            "ROLLBACK TO SAVEPOINT replayed this transaction's earlier writes",
            hint=_ROLL_BACK + " Then retry it.",
        )
    if not records:
        state.clock = before  # restarted with nothing replayed: a new snapshot
    state.truncate(mark)
    runner.txn_status = "T"


def _refusal(runner: StatementRunner, state: SavepointState, mark: Mark) -> str | None:
    """Why the writes before `mark` cannot be replayed (None: they can, or there are
    none), from what is known without asking DuckDB."""
    if state.sticky:
        return state.sticky
    if mark.undoable:
        return f"{state.undoable[0]} ran before the savepoint and cannot be replayed"
    if mark.count == 0:
        return None
    if state.overflow:
        return f"its writes exceed the {MAX_BYTES // (1024 * 1024)} MB kept for replay"
    if state.clock is None:
        return "it began before its BEGIN (pipelined with earlier statements)"
    if not CLOCK.quiet_since(state.clock):
        return (
            "another transaction committed a write since this one began "
            "(the replay would see different data)"
        )
    if state.settings_changed or state.settings != runner.settings.values:
        return "a session setting changed since its first write"
    return None


def _refused(reason: str) -> PgError:
    return PgError(
        "0A000",
        f"{_CANNOT}: DuckDB has no subtransactions, and replaying the transaction's "
        f"earlier writes would not be exact: {reason}",
        hint=_ROLL_BACK,
    )
