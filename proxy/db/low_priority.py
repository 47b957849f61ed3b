"""Run a long DuckDB statement on a thread of lowered CPU priority, so queries come first.

Why: building an HNSW index is pure CPU (about 80% of it usearch's scalar cosine
distance: ef_construction 128 x M 16, usearch's and DuckDB vss's defaults, is some 4,000
distances per inserted vector) and holds no lock or GIL that readers wait on (measured:
a query on another table during a build took 1.12 vs 1.03 ms idle). On two cores its
threads simply take the CPU from the model and queries: a fresh semantic query slowed
1.8x during a 5,000-row build. With the building thread at nice 19 the same CPU-bound
probe ran at 0.85-0.96x its idle latency while the build slowed only as much as the
machine was busy. Linux gives each thread its own nice value; lowering it needs no
privilege, and the thread ends with the statement, so nothing else stays niced.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger("hatiproxy.db")

T = TypeVar("T")
NICE = 19  # the lowest priority: the work still runs whenever a core is free


def run_low_priority(fn: Callable[[], T], name: str = "hati-low-priority") -> T:
    """fn() on a new thread at nice NICE; waits for it and returns its result or raises
    its exception. (A cursor's interrupt() still reaches a statement running there.)"""
    result: list[T] = []
    error: list[BaseException] = []

    def body() -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        except (AttributeError, OSError) as exc:  # not Linux: run at normal priority
            log.debug("could not lower the priority of %s: %s", name, exc)
        try:
            result.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            error.append(exc)

    thread = threading.Thread(target=body, name=name, daemon=True)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]
