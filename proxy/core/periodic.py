"""A background round run every few seconds until a stop event: the agent lake's
poller (proxy/db/agent_lake_poll.py). One declaration of the loop: a round that fails is logged and the
next one runs; the interval counts from the start of a round, so a slow round is not
followed by a full wait."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger("hatiproxy.periodic")


async def run_every(
    seconds: float | Callable[[], float],
    round_: Callable[[], Awaitable[object]],
    stop: asyncio.Event,
    what: str,
) -> None:
    """await round_() every `seconds` (or `seconds()`, asked after each round) until `stop`
    is set; `what` names it in the log."""
    while not stop.is_set():
        started = time.monotonic()
        try:
            await round_()
        except Exception as exc:
            log.warning("%s failed: %s", what, exc)
        every = seconds() if callable(seconds) else seconds
        wait = max(0.0, every - (time.monotonic() - started))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)
