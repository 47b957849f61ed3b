"""The next batch of a long result encoded on a helper thread while this one goes out.

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
# connection waits for its own batch, so a busy pool only slows streams down.
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hati-prefetch")


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
