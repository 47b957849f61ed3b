"""Who may draw from a sequence while a session reads what its own statement drew.

A statement's draws are read one of two ways (proxy/pgserver/sequence_values.py): an
INSERT ... VALUES reads them from its own RETURNING rows, exact whatever runs beside it
("shared"); any other statement reads the sequences' last values before and after it,
exact only if nobody else draws from them meanwhile ("exclusive"). Keys are sequence
names; a statement takes all its keys at once, so two statements never wait on each
other in a cycle.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class SequenceGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared: Counter[str] = Counter()
        self._exclusive: set[str] = set()

    @contextmanager
    def shared(self, keys: Iterable[str]) -> Iterator[None]:
        names = frozenset(keys)
        with self._cond:
            self._cond.wait_for(lambda: self._exclusive.isdisjoint(names))
            self._shared.update(names)
        try:
            yield
        finally:
            with self._cond:
                self._shared.subtract(names)
                self._cond.notify_all()

    @contextmanager
    def exclusive(self, keys: Iterable[str]) -> Iterator[None]:
        names = frozenset(keys)
        with self._cond:
            self._cond.wait_for(
                lambda: (
                    self._exclusive.isdisjoint(names)
                    and not any(self._shared[n] > 0 for n in names)
                )
            )
            self._exclusive.update(names)
        try:
            yield
        finally:
            with self._cond:
                self._exclusive.difference_update(names)
                self._cond.notify_all()


GATE = SequenceGate()
