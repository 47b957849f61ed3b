"""SocketOutput: replies written past the transport (GIL released) arrive whole and in order."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
import uvloop

from proxy.pgserver.socket_output import SocketOutput


def _reader(sock: socket.socket, total: int, got: bytearray) -> None:
    while len(got) < total:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return
        got += chunk


async def _output_on(sock: socket.socket) -> tuple[asyncio.StreamWriter, SocketOutput]:
    """A stream writer on the running loop over `sock`, as the server wires a client."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, protocol = await loop.connect_accepted_socket(
        lambda: asyncio.StreamReaderProtocol(reader), sock
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return writer, SocketOutput(writer)


@pytest.mark.parametrize("new_loop", [uvloop.new_event_loop, asyncio.new_event_loop])
def test_large_and_small_writes_arrive_in_order_when_the_kernel_takes_only_part(new_loop):
    server_side, client_side = socket.socketpair()
    # A small send buffer: the first big write is only partly taken by os.write and the
    # transport must send the rest before anything written after it.
    server_side.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    messages = [bytes([i % 251]) * size for i, size in enumerate([3, 2_000_000, 7, 500_000, 1])]
    expected = b"".join(messages)
    got = bytearray()
    reading = threading.Thread(target=_reader, args=(client_side, len(expected), got))

    async def main() -> None:
        writer, output = await _output_on(server_side)
        reading.start()
        for message in messages:
            output.write(message)
            # Blocks the loop (so the transport sends nothing) while the reader empties the
            # socket: a direct write now would overtake the bytes the transport still holds.
            time.sleep(0.05)
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    loop = new_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    reading.join(30)
    client_side.close()
    assert bytes(got) == expected


def test_a_closing_transport_gets_the_bytes_instead_of_the_socket():
    server_side, client_side = socket.socketpair()

    async def main() -> int:
        writer, output = await _output_on(server_side)
        output.write(b"before")
        writer.close()
        output.write(b"after")  # the transport drops it, as writer.write would
        await writer.wait_closed()
        return 0

    loop = uvloop.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    client_side.settimeout(10)
    data = b""
    while chunk := client_side.recv(1024):
        data += chunk
    client_side.close()
    assert data == b"before"
