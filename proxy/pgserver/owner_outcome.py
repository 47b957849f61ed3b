"""The runner's hooks that make owner records follow the transaction's outcome
(proxy/access/owner_txn.py): a DDL's owners pending in a block, applied at COMMIT,
dropped at ROLLBACK, a failed block's end, or ROLLBACK TO a savepoint set before it.
The block's NOTIFY / LISTEN / UNLISTEN (runner.notify: notify_wire.py) follow it too."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from transpiler.model import TransactionCommand

if TYPE_CHECKING:
    from proxy.access.owner_txn import Change
    from proxy.pgserver.contexts import StatementRunner
    from transpiler import Statement


def recorder(runner: StatementRunner, writes: int) -> Callable[[list[Change]], None]:
    """What ownership.after calls with a succeeded statement's changes; `writes`: the
    block's write count (the session's SavepointState.writes)."""
    owners = runner.pending_owners
    in_block = runner.txn_status != "I" or runner.implicit
    return lambda changes: owners.record(changes, in_block, writes)


def after(runner: StatementRunner, st: Statement, failed: bool, writes: int) -> None:
    """After `st` ran without error; `failed`: the block had failed before it; `writes`:
    the block's write count now (a ROLLBACK TO set it back to its savepoint's)."""
    cmd = st.command
    if not isinstance(cmd, TransactionCommand):
        return
    owners, notify = runner.pending_owners, runner.notify
    if cmd.action == "commit" and not failed:
        if runner.txn_status == "I" and not runner.implicit:
            owners.commit()
            notify.commit()
    elif cmd.action in ("commit", "rollback"):
        owners.discard()
        notify.discard()
    elif cmd.action == "begin":  # an implicit block made explicit: the count restarts
        owners.renumber()
    elif cmd.action == "rollback_to":
        owners.rolled_back_to(writes)
        notify.rollback_to(cmd.savepoint or "")
    elif cmd.action == "savepoint":
        notify.savepoint(cmd.savepoint or "")
    elif cmd.action == "release":
        notify.release(cmd.savepoint or "")


def block_ended(runner: StatementRunner, committed: bool) -> None:
    """An implicit block committed, or a block rolled back on an error (or a COMMIT
    that failed)."""
    if runner.txn_status != "I" or runner.implicit:
        return
    owners, notify = runner.pending_owners, runner.notify
    if committed:
        owners.commit()
        notify.commit()
    else:
        owners.discard()
        notify.discard()
