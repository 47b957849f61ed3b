"""One agent-lake poller per proxy: the catch-up of every shared service (memories, API
keys, the session search index) hangs off it.

Every `POLL_SECS` it reads the agent lake's current snapshot id (one catalog query) and
wakes only the subscribers that have not caught up to it: an idle proxy costs one query
per tick, not one per service. A subscriber catches up from its own last snapshot (its
feed position), so the poller only says when; a round that fails is tried again at the
next tick (the subscriber's snapshot is not marked seen). A subscriber with work of its
own to retry (a publish the lake refused) says so with `due`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proxy.core.periodic import run_every
from proxy.db.agent_lake import current_snapshot

if TYPE_CHECKING:
    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.engine")

POLL_SECS = 0.25


@dataclass
class _Subscriber:
    what: str
    catch_up: Callable[[], Awaitable[object]]
    due: Callable[[], bool] | None
    seen: int | None = None  # the snapshot its last successful round started at


class LakePoller:
    def __init__(self, db: PooledDB, seconds: float = POLL_SECS) -> None:
        self.db = db
        self.seconds = seconds
        self._subs: list[_Subscriber] = []
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ticks = 0  # snapshot reads (for tests and logs)
        self.wakes = 0  # subscriber rounds run

    def subscribe(
        self,
        what: str,
        catch_up: Callable[[], Awaitable[object]],
        due: Callable[[], bool] | None = None,
    ) -> None:
        """Run `catch_up()` after the lake's snapshot moved (or whenever `due()`)."""
        self._subs.append(_Subscriber(what, catch_up, due))

    async def tick(self) -> None:
        snap = await self.db.read(current_snapshot)
        self.ticks += 1
        woken = [s for s in self._subs if s.seen != snap or (s.due is not None and s.due())]
        if not woken:
            return
        self.wakes += len(woken)
        results = await asyncio.gather(*(s.catch_up() for s in woken), return_exceptions=True)
        for s, result in zip(woken, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("catching up with the agent lake (%s) failed: %s", s.what, result)
            else:
                s.seen = snap

    async def start(self) -> None:
        if self._task is not None or not self._subs:
            return
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(
            run_every(self.seconds, self.tick, self._stop, "polling the agent lake"),
            name="hatiproxy-agent-lake-poll",
        )

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task
            self._task = None
