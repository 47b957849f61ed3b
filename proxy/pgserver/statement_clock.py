"""A statement's clock for statement_timeout: it starts when the statement arrived.

PostgreSQL counts statement_timeout from the statement's receipt. Here a connection with
a message ready may first wait for its turn (proxy/db/turns.py); that wait counts too, so
under load a client's timeout bounds what it waits for, not only the DuckDB work after.
A statement whose time is up before it runs fails with 57014 without running.
"""

from __future__ import annotations

import time

from proxy.wire.errors import PgError


def statement_timed_out() -> PgError:
    return PgError(
        "57014",
        "canceling statement due to statement timeout",
        hint="the server is busy: retry, or raise statement_timeout",
    )


def remaining_ms(since: float | None, timeout_ms: int) -> int:
    """What is left of `timeout_ms` (0: none) for a statement that arrived at `since`
    (time.monotonic(); None: now); 57014 when nothing is left."""
    if not timeout_ms or since is None:
        return timeout_ms
    left = timeout_ms - int((time.monotonic() - since) * 1000)
    if left <= 0:
        raise statement_timed_out()
    return left
