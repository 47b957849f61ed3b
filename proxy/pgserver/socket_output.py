"""A client's replies, sent with the GIL released.

asyncio's and uvloop's transports send from the event loop with the GIL held, and a send
on loopback also wakes the client: tens of microseconds in which no other connection's
thread may run Python, while DuckDB's binding takes the GIL back several times inside
each `execute`. `os.write` releases it. It is used only while the transport has nothing
queued (so bytes stay in order) on a plain socket (TLS must go through its transport);
whatever the kernel does not take, and any error, goes to the transport as before.
"""

from __future__ import annotations

import asyncio
import os


class SocketOutput:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._transport: asyncio.BaseTransport | None = None
        self._fd: int | None = None  # of self._transport, when it is a plain socket

    def write(self, data: bytes | memoryview) -> None:
        transport = self._writer.transport
        fd = self._fd if transport is self._transport else self._plain_fd(transport)
        # uvloop's transports are not asyncio.WriteTransport subclasses, but have its methods.
        idle = fd is not None and not transport.is_closing()
        if idle and transport.get_write_buffer_size() == 0:  # type: ignore[attr-defined]
            try:
                sent = os.write(fd, data)  # type: ignore[arg-type]
            except OSError:  # would block, or the client is gone: the transport sees to it
                sent = 0
            if sent == len(data):
                return
            data = data[sent:]
        self._writer.write(data)

    def _plain_fd(self, transport: asyncio.BaseTransport) -> int | None:
        """The socket's fd, or None under TLS; looked up once per transport (start_tls
        replaces it)."""
        self._transport = transport
        sock = transport.get_extra_info("socket")
        tls = transport.get_extra_info("sslcontext") or transport.get_extra_info("ssl_object")
        plain = sock is not None and not tls
        self._fd = sock.fileno() if plain else None
        return self._fd
