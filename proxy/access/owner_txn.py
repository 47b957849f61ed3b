"""Owner records follow the transaction that made them (proxy/access/ownership.py).

A DDL statement's owner changes are known once it succeeded, but inside a transaction
block (BEGIN ..., or an implicit block of several statements in one Query) the object
exists only if the block commits. So each session keeps its changes pending: they are
applied to the shared records at COMMIT, discarded at ROLLBACK (or when the block
failed), and those made after a savepoint go with ROLLBACK TO it. Outside a block they
apply at once. While pending they are the session's own view of the owners, so a
login may alter, in the same block, a table it has just created.
"""

from __future__ import annotations

from collections.abc import Callable

from proxy.access import ownership
from proxy.access.ownership import Key, Login, OwnerStore

Change = Callable[[OwnerStore], None]


class PendingOwners:
    """One session's owner changes not yet committed, with an overlay for the checks."""

    def __init__(self) -> None:
        self.changes: list[tuple[int, Change]] = []  # (the block's write count, change)
        self.overlay: dict[Key, Login | None] = {}  # None: dropped in this block

    # The OwnerStore interface the guard's changes and checks use.
    def owner(self, key: Key) -> Login | None:
        if key in self.overlay:
            return self.overlay[key]
        return ownership.store().owner(key)

    def set(self, key: Key, login: Login) -> None:
        self.overlay[key] = login

    def drop(self, key: Key) -> None:
        self.overlay[key] = None

    # Transaction outcomes.
    def record(self, changes: list[Change], in_block: bool, writes: int) -> None:
        """A statement succeeded; `writes`: the block's write count after it (a later
        ROLLBACK TO a savepoint set before it resets the count below this)."""
        if not in_block:
            ownership.store().apply(changes)
            return
        for change in changes:
            change(self)  # type: ignore[arg-type]  # duck-typed: owner/set/drop
            self.changes.append((writes, change))

    def commit(self) -> None:
        changes = [c for _, c in self.changes]
        self.discard()
        ownership.store().apply(changes)

    def discard(self) -> None:
        self.changes.clear()
        self.overlay.clear()

    def renumber(self) -> None:
        """The block's write count restarted (BEGIN in an implicit block): what is
        pending stays with the block, before any savepoint."""
        self.changes = [(0, c) for _, c in self.changes]

    def rolled_back_to(self, writes: int) -> None:
        """ROLLBACK TO SAVEPOINT succeeded: the block's writes after `writes` are undone."""
        kept = [(n, c) for n, c in self.changes if n <= writes]
        if len(kept) == len(self.changes):
            return
        self.discard()
        for n, change in kept:
            change(self)  # type: ignore[arg-type]
            self.changes.append((n, change))
