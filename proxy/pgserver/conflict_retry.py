"""Autocommit statements that lose a write-write conflict run again.

PostgreSQL makes a statement outside a transaction block wait for the row lock another
transaction holds, then applies it to the newest row version: the client never sees a
conflict. DuckDB instead fails the statement at once ("Conflict on update!", 40001) and
rolls it back. Nothing of such a statement reached the client yet, so the server runs it
again, a bounded number of times with a short jittered backoff (the other transaction
is usually a few milliseconds from committing); only then does 40001 reach the client.

A statement inside a block (BEGIN, or several statements of one Query) is never run
again here: its transaction saw other statements, and the client retries it whole, as
with PostgreSQL's REPEATABLE READ. Its 40001 is held back until some write has finished
since the statement began (the commit clock moved), for at most HOLD_ERROR seconds: a
client that retries at once (pgbench --max-tries) would otherwise collide again with the
same open transaction, over and over.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from proxy.db.commit_clock import CLOCK
from proxy.wire.errors import PgError

log = logging.getLogger("hatiproxy.runner")

T = TypeVar("T")

SERIALIZATION_FAILURE = "40001"
# Tries in all, and the backoff: up to FIRST_DELAY * 2**n seconds (capped), jittered so
# that the statements that collided do not collide again in step. About 3 s at worst,
# where PostgreSQL would have waited on the row lock for as long as it takes.
MAX_TRIES = 60
FIRST_DELAY = 0.001
MAX_DELAY = 0.05
HOLD_ERROR = 0.05
POLL = 0.001


def backoff(attempt: int) -> float:
    """Seconds to wait before try `attempt + 1` (attempt >= 1)."""
    return random.uniform(0.5, 1.5) * min(MAX_DELAY, FIRST_DELAY * 2 ** (attempt - 1))


async def run(
    attempt: Callable[[], Awaitable[T]],
    *,
    retry: bool,
    undo: Callable[[], Awaitable[None]] | None = None,
    sql: str = "",
) -> T:
    """Run `attempt`; while `retry` and it fails with 40001, `undo` (roll back what the
    failed try left open) and run it again, at most MAX_TRIES times in all."""
    tries = 1
    while True:
        finished = CLOCK.finished
        try:
            return await attempt()
        except PgError as err:
            if err.sqlstate == SERIALIZATION_FAILURE and not retry:
                await _until_a_write_finishes(finished)
            if not retry or err.sqlstate != SERIALIZATION_FAILURE or tries >= MAX_TRIES:
                if retry and tries > 1:
                    log.info("write conflict: gave up after %d tries: %.200s", tries, sql)
                raise
            if undo is not None:
                await undo()
            await asyncio.sleep(backoff(tries))
            tries += 1


async def _until_a_write_finishes(finished: int) -> None:
    """Wait (briefly) until a write finished after the clock read `finished`: likely the
    transaction this one collided with."""
    waited = 0.0
    while CLOCK.finished == finished and waited < HOLD_ERROR:
        await asyncio.sleep(POLL)
        waited += POLL
