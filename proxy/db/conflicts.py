"""Write-write conflicts: DuckDB's optimistic concurrency fails one of two transactions
that write the same rows (a TransactionException at a statement or at COMMIT; 40001 in
a DuckLake shared by several proxies). The loser's whole transaction runs again on what
is committed then, so each caller's `fn` must be the whole transaction. One place for
how often to run again and how long to wait in between."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import duckdb

T = TypeVar("T")

CONFLICT: tuple[type[Exception], ...] = (duckdb.TransactionException,)
# also a concurrent first insert of one key, which loses with a constraint error
CONFLICT_OR_DUPLICATE: tuple[type[Exception], ...] = (
    duckdb.TransactionException,
    duckdb.ConstraintException,
)


def pause(attempt: int, step: float, cap: float = 0.3) -> float:
    """Seconds to wait after failed attempt `attempt` (0-based): growing by `step`, at
    most `cap`, jittered so that two contenders do not collide again in step."""
    return min(step * (attempt + 1), cap) * (0.5 + random.random())


def again_on_conflict(
    fn: Callable[[], T],
    *,
    attempts: int,
    step: float = 0.0,
    errors: tuple[type[Exception], ...] = CONFLICT,
    on_retry: Callable[[], None] | None = None,
) -> T:
    """fn(), run again (at most `attempts` runs in all) while it fails with `errors`;
    the last failure is raised."""
    for attempt in range(attempts - 1):
        try:
            return fn()
        except errors:
            if on_retry is not None:
                on_retry()
            if step:
                time.sleep(pause(attempt, step))
    return fn()


async def again_on_conflict_async(
    op: Callable[[], Awaitable[T]],
    *,
    attempts: int,
    step: float = 0.0,
    errors: tuple[type[Exception], ...] = CONFLICT,
    on_retry: Callable[[], None] | None = None,
) -> T:
    """`again_on_conflict` for a coroutine function: the waits do not block the loop."""
    for attempt in range(attempts - 1):
        try:
            return await op()
        except errors:
            if on_retry is not None:
                on_retry()
            if step:
                await asyncio.sleep(pause(attempt, step))
    return await op()
