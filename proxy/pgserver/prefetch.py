"""The next batch of a long result encoded on a helper thread while this one goes out,
and the batch after it read from DuckDB on another while that one is encoded.

A connection's own thread reads and encodes a batch, then waits for the client to take
it (`flush_if_large`). Encoding the next batch on a helper thread during that wait lets
the server's work overlap the client's, as PostgreSQL's backend does with its socket
buffer. One batch at most is made ahead, so memory stays bounded. The result is still
collected through `runner.call`, so DuckDB errors are mapped and the statement timeout
and cancel requests reach a read in progress (`cursor.interrupt` works from any thread).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from proxy.pgserver.contexts import StatementRunner

T = TypeVar("T")

# Shared by every connection: a helper runs one batch (~16k rows) at a time, and a
# connection waits for its own batch, so a busy pool only slows streams down. Reads have
# a pool of their own: an encoding step waits for its read, and must never wait for a
# read queued behind encoding steps.
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hati-prefetch")
_READS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hati-read")


class Prefetch(Generic[T]):
    """`produce` run one step ahead on a helper thread."""

    def __init__(self, runner: StatementRunner, produce: Callable[[], T]) -> None:
        self._runner = runner
        self._produce = produce
        self._ahead: Future[T] | None = None

    def ahead(self) -> None:
        """Start producing the next step now (call it before sending the current one)."""
        if self._ahead is None:
            ctx = contextvars.copy_context()
            self._ahead = _POOL.submit(ctx.run, self._produce)

    async def next(self) -> T:
        """The next step: the one made ahead, or made now."""
        self.ahead()
        ahead, self._ahead = self._ahead, None
        assert ahead is not None
        return await self._runner.call(ahead.result)

    def close(self) -> None:
        """Wait for a step still running (it uses the cursor) and drop its result."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.cancel()
            with contextlib.suppress(Exception):  # the statement already ended otherwise
                ahead.result()


class ReadAhead(Generic[T]):
    """`read` (DuckDB's next Arrow batch, None at the end) run one call ahead on a helper
    thread: DuckDB executes and converts the next batch while this one is encoded, so a
    stream takes the longer of the two per batch rather than their sum when a core is
    free. One batch at most is read ahead. `close` must run before the cursor is used
    for anything else."""

    def __init__(self, read: Callable[[], T | None]) -> None:
        self._read = read
        self._ahead: Future[T | None] | None = None
        self._done = False

    def next(self) -> T | None:
        """The next batch (from the encoding thread); starts reading the one after it."""
        if self._done:
            return None
        ahead, self._ahead = self._ahead, None
        batch = ahead.result() if ahead is not None else self._read()
        if batch is None:
            self._done = True
        else:
            self._ahead = _READS.submit(contextvars.copy_context().run, self._read)
        return batch

    def close(self) -> T | None:
        """Wait for a read still running; its batch (None: none, the end, or it failed)."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        try:
            return ahead.result()
        except Exception:  # the statement already ended otherwise
            return None
