"""Memories stored without a vector yet (embedding pending or failed), by agent.

Only these need search's keyword scan when a search has a query vector. While at most
`PENDING_ROWS_IN_RAM` of them are known with their rows (SELECT_COLUMNS, contents up to
TEXT_IN_RAM), that scan reads these copies instead of the table; they stay exact because
every write of a memory row hands the row here (`refresh`), as for the vectors' rows.

Mutated on the event-loop thread only; `rows` is read from search's worker thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Rows kept in RAM across all agents; past it a new one is not kept, and search reads
# that agent's pending memories from the table until the index holds all of them again.
PENDING_ROWS_IN_RAM = 10_000

Key = tuple[str, str]  # (org_id, agent_id)


class Unembedded:
    def __init__(self) -> None:
        self._seqs: dict[Key, set[int]] = {}
        self._owner: dict[int, Key] = {}
        self._rows: dict[Key, dict[int, tuple[Any, ...]]] = {}
        self.kept = 0  # rows held, over all agents (<= PENDING_ROWS_IN_RAM)

    def __len__(self) -> int:
        return len(self._owner)

    def note(self, org_id: str, agent_id: str, seq: int, row: tuple[Any, ...] | None) -> None:
        """A memory row with has_embedding = false exists (until `done`); `row`: its
        SELECT_COLUMNS row as committed (None: not known here)."""
        key = (org_id, agent_id)
        self._seqs.setdefault(key, set()).add(seq)
        self._owner[seq] = key
        self._keep(key, seq, row)

    def has(self, org_id: str, agent_id: str) -> bool:
        return bool(self._seqs.get((org_id, agent_id)))

    def rows(self, org_id: str, agent_id: str) -> tuple[tuple[Any, ...], ...] | None:
        """The rows of the agent's memories without a vector, or None when not every one
        is held here (read the table then)."""
        key = (org_id, agent_id)
        seqs = self._seqs.get(key)
        if not seqs:
            return ()
        rows = self._rows.get(key)
        if rows is None or len(rows) != len(seqs):
            return None
        return tuple(rows.values())  # one C call: atomic against the loop's writes

    def kept_rows(self) -> Iterator[tuple[Any, ...]]:
        for rows in self._rows.values():
            yield from rows.values()

    def refresh(self, seq: int, row: tuple[Any, ...] | None) -> None:
        """The memory's row was updated: follow it (None: its content is now too long)."""
        key = self._owner.get(seq)
        if key is not None and seq in self._rows.get(key, ()):
            self._keep(key, seq, row)

    def done(self, seq: int) -> None:
        """The memory got its vector, or was deleted."""
        key = self._owner.pop(seq, None)
        if key is not None:
            self._seqs[key].discard(seq)
            rows = self._rows.get(key)
            if rows is not None and rows.pop(seq, None) is not None:
                self.kept -= 1

    def clear(self) -> None:
        self._seqs.clear()
        self._owner.clear()
        self._rows.clear()
        self.kept = 0

    def _keep(self, key: Key, seq: int, row: tuple[Any, ...] | None) -> None:
        rows = self._rows.setdefault(key, {})
        had = seq in rows
        if row is not None and (had or self.kept < PENDING_ROWS_IN_RAM):
            rows[seq] = row
            if not had:
                self.kept += 1
        elif had:  # no longer known as committed: read the table
            del rows[seq]
            self.kept -= 1
