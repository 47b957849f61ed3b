"""AuthThrottle: slowing, banning, windows, resets and bounded memory, on an injected clock."""

from __future__ import annotations

import pytest

from proxy.access.throttle import AuthThrottle, Banned, normalize_source


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(throttle: AuthThrottle, source: str, times: int) -> None:
    for _ in range(times):
        throttle.failure(source)


def test_no_delay_under_the_limit_then_exponential_and_capped() -> None:
    throttle = AuthThrottle(5, 300, clock=Clock())
    delays = []
    for _ in range(12):
        delays.append(throttle.delay("10.0.0.1"))
        throttle.failure("10.0.0.1")
    assert delays[:5] == [0.0] * 5
    assert delays[5:11] == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
    assert delays[11] == 5.0


def test_ban_at_four_times_the_limit_and_it_expires() -> None:
    clock = Clock()
    throttle = AuthThrottle(3, 60, clock=clock)
    fail(throttle, "10.0.0.1", 11)
    assert throttle.delay("10.0.0.1") == 5.0  # 11 failures: slowed, not yet banned
    throttle.failure("10.0.0.1")
    with pytest.raises(Banned) as info:
        throttle.delay("10.0.0.1")
    assert info.value.retry_after == pytest.approx(60)
    clock.now += 45
    with pytest.raises(Banned) as info:
        throttle.delay("10.0.0.1")
    assert info.value.retry_after == pytest.approx(15)
    assert throttle.delay("10.0.0.2") == 0.0  # other sources are unaffected
    clock.now += 15
    assert throttle.delay("10.0.0.1") == 0.0  # ban served: a fresh start
    fail(throttle, "10.0.0.1", 2)
    assert throttle.delay("10.0.0.1") == 0.0


def test_failures_slide_out_of_the_window() -> None:
    clock = Clock()
    throttle = AuthThrottle(2, 300, window=100, clock=clock)
    throttle.failure("h")
    clock.now += 60
    throttle.failure("h")
    assert throttle.delay("h") == 0.25
    clock.now += 41  # the first failure is now older than the window
    assert throttle.delay("h") == 0.0
    throttle.failure("h")
    assert throttle.delay("h") == 0.25
    clock.now += 200
    assert throttle.delay("h") == 0.0
    assert len(throttle) == 0  # an entry with nothing left is dropped


def test_success_resets_the_source() -> None:
    throttle = AuthThrottle(2, 300, clock=Clock())
    fail(throttle, "10.0.0.1", 4)
    assert throttle.delay("10.0.0.1") == 1.0
    throttle.success("10.0.0.1")
    assert throttle.delay("10.0.0.1") == 0.0
    throttle.failure("10.0.0.1")
    assert throttle.delay("10.0.0.1") == 0.0


def test_ipv4_mapped_ipv6_is_the_same_source() -> None:
    assert normalize_source("::ffff:192.0.2.7") == "192.0.2.7"
    assert normalize_source("2001:DB8:0::1") == "2001:db8::1"
    throttle = AuthThrottle(1, 300, clock=Clock())
    throttle.failure("::ffff:192.0.2.7")
    throttle.failure("192.0.2.7")
    assert throttle.delay("192.0.2.7") == 0.5
    assert throttle.delay("::ffff:c000:207") == 0.5
    fail(throttle, "192.0.2.7", 2)
    with pytest.raises(Banned):
        throttle.delay("::ffff:192.0.2.7")


def test_disabled_when_the_limit_is_zero() -> None:
    for limit in (0, -1):
        throttle = AuthThrottle(limit, 300, clock=Clock())
        fail(throttle, "10.0.0.1", 100)
        assert throttle.delay("10.0.0.1") == 0.0
        assert len(throttle) == 0


def test_memory_is_bounded_oldest_sources_dropped() -> None:
    throttle = AuthThrottle(1, 300, clock=Clock(), max_sources=3)
    for i in range(5):
        throttle.failure(f"10.0.0.{i}")
    assert len(throttle) == 3
    assert throttle.delay("10.0.0.0") == 0.0  # dropped
    assert throttle.delay("10.0.0.1") == 0.0  # dropped
    assert throttle.delay("10.0.0.4") == 0.25
    throttle.failure("10.0.0.2")  # recently failing again: kept over 10.0.0.3
    throttle.failure("10.0.0.5")
    assert throttle.delay("10.0.0.3") == 0.0
    assert throttle.delay("10.0.0.2") == 0.5


def test_per_source_history_is_capped() -> None:
    throttle = AuthThrottle(2, 0, clock=Clock())  # ban_seconds 0: slow only, never ban
    fail(throttle, "h", 1000)
    assert throttle.delay("h") == 5.0
    assert len(throttle._sources["h"].failures) == 8
