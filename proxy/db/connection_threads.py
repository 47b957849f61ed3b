"""Each client connection runs on a thread of its own, with an event loop of its own.

Why: a point query costs DuckDB about 0.3 ms, and handing it from a shared event loop to
a worker thread and back added about 0.2 ms more. On its own thread a connection calls
DuckDB directly (`Engine.run` sees `on_connection_thread()`): blocking there delays no
other client, and DuckDB releases the GIL, so connections still run in parallel. The
server's main loop keeps accepting sockets, HTTP and the agent layer; coroutines that
use the agent layer's asyncio state are sent to it with `on_main`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from proxy.db.turns import give_thread_turn

log = logging.getLogger("hatiproxy.connections")
T = TypeVar("T")

_local = threading.local()  # .main: the server's main loop, on connection threads only


def on_connection_thread() -> bool:
    return getattr(_local, "main", None) is not None


async def on_main(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the server's main loop (it is simply awaited when already there).

    The connection keeps its turn meanwhile (db/turns.py): the main loop's work is its
    statement's (a search_memory's ranking, a store_memory's write), and giving the turn
    away let the next connections start while that work waited for the CPU, so under
    load searches took 2-3x the other kinds and paced every connection (bench/load.py at
    50 connections: search p50 1.37 s against 0.55 s for a point SELECT; keeping the
    turn, 0.72 s against 0.56 s, and 1.2 s longest gap per connection against 2.3 s).
    A turn held long (a call waiting for the model, `wait := true`) stops counting once
    another connection waits, as any long turn does."""
    main = getattr(_local, "main", None)
    if main is None:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, main))


def _new_loop_like(main: asyncio.AbstractEventLoop) -> asyncio.AbstractEventLoop:
    if type(main).__module__.startswith("uvloop"):
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


Serve = Callable[[socket.socket], Coroutine[Any, Any, None]]


class ConnectionThreads:
    """Starts a thread per accepted socket and, at shutdown, cancels and joins them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = {}
        self._threads: set[threading.Thread] = set()
        self._stopping = False

    def start(self, serve: Serve, sock: socket.socket) -> None:
        """Serve `sock` on a new thread; call from the main loop."""
        main = asyncio.get_running_loop()
        thread = threading.Thread(
            target=self._run, args=(serve, sock, main), name="hatiproxy-client", daemon=True
        )
        with self._lock:
            self._threads.add(thread)
        try:
            thread.start()
        except RuntimeError:  # the system refuses another thread: drop this client only
            with self._lock:
                self._threads.discard(thread)
            sock.close()
            log.error("no thread available for a new client connection; closed it")

    def _run(self, serve: Serve, sock: socket.socket, main: asyncio.AbstractEventLoop) -> None:
        me = threading.current_thread()
        loop = _new_loop_like(main)
        _local.main = main
        try:
            task = loop.create_task(serve(sock))
            with self._lock:
                stopping = self._stopping
                self._live[me.ident or 0] = (loop, task)
            if stopping:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(task)
        except Exception:
            log.exception("client connection thread failed")
        finally:
            with self._lock:
                self._live.pop(me.ident or 0, None)
                self._threads.discard(me)
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            give_thread_turn()  # a connection that ended inside a statement
            sock.close()  # idempotent; covers a socket whose transport never took it
            _local.main = None

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Cancel every connection's session and wait (at most timeout_s) for the threads."""
        with self._lock:
            self._stopping = True
            live = list(self._live.values())
            threads = list(self._threads)
        for loop, task in live:
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)

        def join() -> None:
            deadline = time.monotonic() + timeout_s
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            stuck = [t for t in threads if t.is_alive()]
            if stuck:
                log.warning("%d client threads still running at shutdown", len(stuck))

        await asyncio.to_thread(join)
