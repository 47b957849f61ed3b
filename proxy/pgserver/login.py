"""Who a wire client is: trust, a configured user's password (SCRAM, MD5 or cleartext), or
an API key given as the password; every refusal is logged once, without the password."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from proxy.access.keys import Principal
from proxy.access.service import AccessControl, AuthError, TooManyFailures
from proxy.db.connection_threads import on_main
from proxy.wire import auth
from proxy.wire import messages as m
from proxy.wire.errors import FatalError, ProtocolViolation

log = logging.getLogger("hatiproxy.server")


class Channel(Protocol):
    """What login needs of a connection: its socket's peer and the message stream."""

    writer: asyncio.StreamWriter

    def out(self, data: bytes) -> None: ...

    async def flush(self) -> None: ...

    async def receive(self) -> m.FrontendMessage: ...


async def login(
    conn: Channel, access: AccessControl, auth_method: str, user: str, deadline: float
) -> Principal | None:
    """Trust, a configured user's password (auth_method), or an API key as the password."""
    source = peer_host(conn.writer)
    if access.trust:
        if not access.trust_allowed(source):
            log_failed_login(user, source, "trust login from a non-loopback client")
            raise FatalError(
                "28000",
                "passwordless (trust) login is allowed only from loopback clients",
                hint="Create an API key (hatiproxy keys create) or configure users.",
            )
        return None
    try:
        access.check_banned(source)
    except TooManyFailures as exc:
        log_failed_login(user, source, str(exc))
        raise FatalError("28000", str(exc)) from None
    try:
        if user in access.passwords:
            method = auth_method
            try:
                await exchange(conn, auth.METHODS[method](user, access.passwords[user]), deadline)
            except FatalError as exc:
                if exc.sqlstate == "28P01":
                    log_failed_login(user, source, f"wrong password ({method})")
                raise
            return None
        # An API key as the password: cleartext, since only the key's hash is stored.
        password = auth.PasswordCapture(user, None)
        await exchange(conn, password, deadline)
        try:
            return await on_main(access.authenticate(password.given))
        except AuthError as exc:
            log_failed_login(
                user,
                source,
                f"not a configured user, and the password is no valid API key ({exc})",
            )
            raise FatalError(
                "28P01",
                f'password authentication failed for user "{user}"',
                hint="Use an API key (hd_live_... / hd_agent_...) or a configured user's password.",
            ) from None
    except FatalError as exc:
        if exc.sqlstate == "28P01":
            await on_main(access.penalise(source))
        raise


async def exchange(conn: Channel, authenticator: auth.Authenticator, deadline: float) -> None:
    conn.out(authenticator.start())
    await conn.flush()
    while True:
        async with asyncio.timeout_at(deadline):
            msg = await conn.receive()
        if not isinstance(msg, m.PasswordData):
            raise ProtocolViolation("expected a password response")
        reply, done = authenticator.step(msg.data)
        if reply:
            conn.out(reply)
        if done:
            return
        await conn.flush()


def log_failed_login(user: str, source: str, reason: str) -> None:
    """One WARNING per refused login: who, from where and why; never the password."""
    log.warning("failed login on the wire: user %r from %s: %s", user, source, reason)


def peer_host(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if not peer:  # unix socket: local by definition
        return "localhost"
    return str(peer[0]) if isinstance(peer, tuple) else str(peer)
