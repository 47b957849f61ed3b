"""Listening sockets for every server of the process (wire, MCP, REST)."""

from __future__ import annotations

import socket


def listen_socket(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A listening TCP socket created with proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on
    accepted sockets only then; without it small responses wait ~40 ms (Nagle + delayed
    ACK)."""
    family, kind, proto, _, addr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
