"""A client's incoming bytes, fed by the transport straight into the frontend decoder.

`WireReader` stands where asyncio's StreamReader would: the StreamReaderProtocol hands
it each chunk the socket (or TLS layer) delivers, and it decodes in place. The session
waits on `receive()`; there is no reader task between the socket and the session, so a
client packet wakes the session in one event-loop step. End of input (or a dead socket)
is noticed even while a statement runs, through the `on_eof` hook.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from proxy.db.turns import TURNS, Turn, turn_of_thread
from proxy.wire import messages as m

# Stop reading from a client while this much decoded-but-unprocessed input is queued
# (only when a whole message is ready, so the session can always make progress).
INPUT_HIGH_WATER = 1024 * 1024


class ClientGone(Exception):
    """The client closed its socket."""


class WireReader(asyncio.StreamReader):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self.decoder = m.FrontendDecoder()
        self.on_eof: Callable[[], None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._gone = False
        self._paused = False
        self._turn: Turn | None = None  # this connection's (its thread's) turn

    # --- the protocol side (called by StreamReaderProtocol) --------------------------

    def feed_data(self, data: bytes) -> None:
        self.decoder.feed(data)
        self._wake()
        if (
            not self._paused
            and self.decoder.buffered > INPUT_HIGH_WATER
            and self.decoder.has_message()
            and self._transport is not None
        ):
            self._paused = True
            self._transport.pause_reading()

    def feed_eof(self) -> None:
        self._end()

    def set_exception(self, exc: BaseException) -> None:
        self._end()

    def _end(self) -> None:
        if self._gone:
            return
        self._gone = True
        self._wake()
        if self.on_eof is not None:
            self.on_eof()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # --- the session side ------------------------------------------------------------

    def sync_next(self) -> bool:
        """The client's next message, already here, is a Sync."""
        return self.decoder.sync_next()

    async def receive(self) -> m.FrontendMessage:
        """The next whole message; ClientGone once the client has closed and all is read."""
        while True:
            msg = self.decoder.next_message()
            if msg is not None:
                if self._paused and not (
                    self.decoder.buffered > INPUT_HIGH_WATER and self.decoder.has_message()
                ):
                    self._paused = False
                    if self._transport is not None:
                        self._transport.resume_reading()
                # This connection runs only in its turn, FIFO among all (db/turns.py);
                # a turn held already (the rest of a statement's messages) costs no call.
                turn = self._turn
                if turn is None:
                    turn = self._turn = turn_of_thread()
                if not turn.held:
                    await TURNS.take(turn)
                return msg
            if self._gone:
                raise ClientGone
            turn = self._turn
            if turn is not None and turn.held:  # waiting for the client: others run meanwhile
                TURNS.give(turn)
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
