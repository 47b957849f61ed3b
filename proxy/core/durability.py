"""Acknowledgements that may wait until just before the reply is sent.

A journaled agent write (proxy/agent/journal.py) is durable once its log line is
fsynced. On a client connection the statement that made the write still has DuckDB work
to do (its result rows); the fsync runs meanwhile on the journal's flusher thread, and
the connection waits for it only before it replies (`deferred`). Elsewhere (MCP, REST,
tests) `wait_or_defer` simply waits.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

_local = threading.local()  # .waits: the current statement's pending waits, on this thread


def wait_or_defer(wait: Callable[[], None]) -> None:
    """Wait now, or, inside `deferred()` on this thread, when its block ends."""
    waits = getattr(_local, "waits", None)
    if waits is None:
        wait()
    else:
        waits.append(wait)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Collect the waits of the block and run them as it ends (also when it raises: what
    was written is still made durable before the error is answered)."""
    prev = getattr(_local, "waits", None)
    waits: list[Callable[[], None]] = []
    _local.waits = waits
    try:
        yield
    finally:
        _local.waits = prev
        for wait in waits:
            wait()
