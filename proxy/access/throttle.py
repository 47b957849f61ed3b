"""Brute-force slowing per source address, shared by the wire server, REST and MCP over HTTP.

The caller asks `delay(source)` before judging an attempt, sleeps that long, checks the
credential, then reports `failure(source)` or `success(source)`:

- failures are counted per source within a sliding `window` (seconds);
- from `failure_limit` failures on, each further attempt waits 0.25 s, doubling per
  failure, capped at 5 s (slows guessing without locking a fumbling human out);
- at 4 x `failure_limit` failures the source is banned for `ban_seconds`: `delay` raises
  `Banned` (with `retry_after`) until the ban ends; then the source starts afresh;
- a success forgets the source; `failure_limit <= 0` turns all of it off.

Memory is bounded: at most `max_sources` sources (least recently failing dropped first),
each keeping at most 4 x `failure_limit` timestamps. Sources are IP strings; an
IPv4-mapped IPv6 address counts as its IPv4 address, so one client is one source
whichever socket family it arrived on.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

BASE_DELAY = 0.25
MAX_DELAY = 5.0
BAN_FACTOR = 4  # failures (x failure_limit) that turn slowing into a ban


class Banned(Exception):
    """The source failed too often; refuse without checking anything."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = max(0.0, retry_after)
        super().__init__(
            f"too many failed authentication attempts; retry in {self.retry_after:.0f} s"
        )


def normalize_source(source: str) -> str:
    """Canonical text of an address (IPv4-mapped IPv6 -> IPv4); other strings as given."""
    text = (source or "").strip()
    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return text
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


@dataclass
class _Source:
    failures: deque[float]
    banned_until: float = field(default=0.0)


class AuthThrottle:
    def __init__(
        self,
        failure_limit: int = 5,
        ban_seconds: float = 300,
        *,
        window: float = 600,
        clock: Callable[[], float] = time.monotonic,
        max_sources: int = 10_000,
    ) -> None:
        self.failure_limit = failure_limit
        self.ban_seconds = ban_seconds
        self.window = window
        self.clock = clock
        self.max_sources = max(1, max_sources)
        self._ban_at = BAN_FACTOR * max(failure_limit, 0)
        self._sources: OrderedDict[str, _Source] = OrderedDict()
        # The wire server and the HTTP apps share one instance; some callers use threads.
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.failure_limit > 0

    def delay(self, source: str) -> float:
        """Seconds to wait before judging this attempt; raises Banned while banned."""
        if not self.enabled:
            return 0.0
        key = normalize_source(source)
        with self._lock:
            entry = self._sources.get(key)
            if entry is None:
                return 0.0
            now = self.clock()
            if entry.banned_until:
                if now < entry.banned_until:
                    raise Banned(entry.banned_until - now)
                del self._sources[key]  # the ban is served: a fresh start
                return 0.0
            count = self._prune(entry, now)
            if count == 0:
                del self._sources[key]
                return 0.0
        if count < self.failure_limit:
            return 0.0
        return min(MAX_DELAY, BASE_DELAY * 2.0 ** (count - self.failure_limit))

    def failure(self, source: str) -> None:
        if not self.enabled:
            return
        key = normalize_source(source)
        with self._lock:
            now = self.clock()
            entry = self._sources.get(key)
            if entry is None:
                entry = self._sources[key] = _Source(deque(maxlen=self._ban_at))
            elif entry.banned_until and now >= entry.banned_until:
                entry.banned_until = 0.0  # a failure right after a served ban starts a new count
                entry.failures.clear()
            self._sources.move_to_end(key)
            self._prune(entry, now)
            entry.failures.append(now)
            if len(entry.failures) >= self._ban_at and self.ban_seconds > 0:
                entry.banned_until = now + self.ban_seconds
            while len(self._sources) > self.max_sources:
                self._sources.popitem(last=False)

    def success(self, source: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._sources.pop(normalize_source(source), None)

    def __len__(self) -> int:
        return len(self._sources)

    def _prune(self, entry: _Source, now: float) -> int:
        """Forget failures older than the window; the count left."""
        horizon = now - self.window
        while entry.failures and entry.failures[0] <= horizon:
            entry.failures.popleft()
        return len(entry.failures)
