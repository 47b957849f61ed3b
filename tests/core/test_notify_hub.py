"""The LISTEN / NOTIFY hub without I/O: PostgreSQL 15's delivery rules."""

from __future__ import annotations

import pytest

from proxy.core.notify_hub import (
    ChannelNameError,
    Hub,
    Notification,
    PayloadTooLong,
    PendingTransaction,
)


def listen(hub: Hub, key: int, *channels: str) -> None:
    tx = PendingTransaction()
    for channel in channels:
        tx.listen(channel)
    hub.commit(key, tx, pid=key)


def test_commit_delivers_to_listeners_of_the_channel_only() -> None:
    hub = Hub()
    hub.attach(1, "org")
    hub.attach(2, "org")
    hub.attach(3, "org")
    listen(hub, 1, "jobs")
    listen(hub, 2, "other")
    tx = PendingTransaction()
    tx.notify("jobs", "p")
    assert hub.commit(3, tx, pid=333) == [1]
    assert hub.take(1) == ([Notification("jobs", "p", 333)], 0)
    assert hub.take(2) == ([], 0)
    assert hub.take(1) == ([], 0)


def test_rollback_is_dropping_the_pending_transaction() -> None:
    hub = Hub()
    hub.attach(1, "org")
    listen(hub, 1, "c")
    PendingTransaction().notify("c", "lost")  # never committed
    assert hub.take(1) == ([], 0)


def test_identical_pairs_once_in_first_order() -> None:
    hub = Hub()
    hub.attach(1, "org")
    listen(hub, 1, "c")
    tx = PendingTransaction()
    for payload in ("a", "b", "a", "c", "b"):
        tx.notify("c", payload)
    hub.commit(1, tx, pid=9)
    assert [n.payload for n in hub.take(1)[0]] == ["a", "b", "c"]


def test_self_notify_and_listen_in_the_same_transaction() -> None:
    hub = Hub()
    hub.attach(1, "org")
    tx = PendingTransaction()
    tx.notify("c", "x")
    tx.listen("c")
    assert hub.channels(1) == []  # LISTEN takes effect at commit
    hub.commit(1, tx, pid=1)
    assert hub.channels(1) == ["c"]
    assert hub.take(1) == ([Notification("c", "x", 1)], 0)


def test_rollback_to_savepoint_drops_what_came_after() -> None:
    hub = Hub()
    hub.attach(1, "org")
    tx = PendingTransaction()
    tx.listen("c")
    tx.notify("c", "kept")
    tx.savepoint("s")
    tx.notify("c", "dropped")
    tx.listen("d")
    tx.rollback_to("s")
    tx.notify("c", "after")
    hub.commit(1, tx, pid=1)
    assert [n.payload for n in hub.take(1)[0]] == ["kept", "after"]
    assert hub.channels(1) == ["c"]


def test_release_keeps_the_notifications() -> None:
    tx = PendingTransaction()
    tx.savepoint("s")
    tx.notify("c", "x")
    tx.release("s")
    tx.rollback_to("s")  # unknown now: nothing changes (the server raises 3B001 first)
    assert tx.notifies == [("c", "x")]


def test_unlisten_and_unlisten_all() -> None:
    hub = Hub()
    hub.attach(1, "org")
    listen(hub, 1, "a", "b", "c")
    tx = PendingTransaction()
    tx.unlisten("b")
    hub.commit(1, tx, pid=1)
    assert hub.channels(1) == ["a", "c"]
    tx = PendingTransaction()
    tx.unlisten(None)
    hub.commit(1, tx, pid=1)
    assert hub.channels(1) == []
    tx = PendingTransaction()
    tx.notify("a", "")
    assert hub.commit(1, tx, pid=1) == []


def test_scopes_never_see_each_other() -> None:
    hub = Hub()
    hub.attach(1, "org-a")
    hub.attach(2, "org-b")
    listen(hub, 1, "c")
    listen(hub, 2, "c")
    tx = PendingTransaction()
    tx.notify("c", "for a")
    hub.commit(1, tx, pid=1)
    assert hub.take(2) == ([], 0)
    assert hub.publish("org-b", [("c", "for b")], pid=0) == [2]
    assert [n.payload for n in hub.take(1)[0]] == ["for a"]
    assert [n.payload for n in hub.take(2)[0]] == ["for b"]


def test_full_queue_drops_oldest_and_counts() -> None:
    hub = Hub(queue_limit=2)
    hub.attach(1, "org")
    listen(hub, 1, "c")
    hub.publish("org", [("c", "1"), ("c", "2"), ("c", "3")], pid=5)
    notes, dropped = hub.take(1)
    assert [n.payload for n in notes] == ["2", "3"]
    assert dropped == 1


def test_wake_called_once_per_commit_and_detach_forgets() -> None:
    calls: list[int] = []
    hub = Hub()
    hub.attach(1, "org", wake=lambda: calls.append(1))
    listen(hub, 1, "c")
    hub.publish("org", [("c", "1"), ("c", "2")], pid=5)
    assert calls == [1]
    hub.detach(1)
    assert hub.publish("org", [("c", "3")], pid=5) == []


def test_payload_and_channel_checks() -> None:
    tx = PendingTransaction()
    tx.notify("c", "x" * 7999)
    with pytest.raises(PayloadTooLong) as info:
        tx.notify("c", "x" * 8000)
    assert info.value.sqlstate == "22023"
    assert str(info.value) == "payload string too long"
    with pytest.raises(PayloadTooLong):
        tx.notify("c", "é" * 4000)  # 8000 bytes
    with pytest.raises(ChannelNameError, match="channel name cannot be empty"):
        tx.notify("", "x")
