"""Waiters on the journal (journal.py): asyncio futures of client connections' loops and
the main loop, resolved from the journal's own threads."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def resolve_anywhere(fut: asyncio.Future[None]) -> None:
    """Resolve a waiter's future on its own loop: the main loop's, or a client
    connection's (an asyncio future is not thread-safe)."""
    loop = fut.get_loop()
    if loop is running_loop():
        _resolve(fut)
        return
    with contextlib.suppress(RuntimeError):  # its loop has closed: the waiter is gone
        loop.call_soon_threadsafe(_resolve, fut)


def release(
    waiters: list[tuple[int, asyncio.Future[None]]], reached: int, done: list[Any]
) -> list[tuple[int, asyncio.Future[None]]]:
    """The waiters still waiting; the futures of those whose target is reached go to
    `done` (resolved outside the lock)."""
    still = []
    for target, fut in waiters:
        if target <= reached:
            done.append(fut)
        else:
            still.append((target, fut))
    return still
