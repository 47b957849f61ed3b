"""The asyncio shell around the sans-I/O protocol: sockets, TLS, startup (login: login.py).

The main loop accepts clients; each gets a thread and event loop of its own
(`proxy.db.connection_threads`) running a Connection: the transport feeds its bytes
straight into the frontend decoder (`proxy.pgserver.client_input.WireReader`), and decoded
messages go to its Session, whose DuckDB calls run right there on that thread. A client
that vanishes mid-query is noticed (by the engine's watchdog while DuckDB works) and its
statement interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import itertools
import logging
import secrets
import socket
import ssl
import time
from typing import TYPE_CHECKING

from proxy.access import agent_rule
from proxy.access.agent_rule import AGENT_SETTING
from proxy.core.errors import AgentError
from proxy.core.net import listen_socket
from proxy.core.notify_hub import scope as notify_scope
from proxy.db import backend_functions
from proxy.db.backends import Backend, Backends, is_superuser
from proxy.db.catalog import org_scope
from proxy.db.connection_threads import ConnectionThreads
from proxy.db.settings import REPORTED, SessionSettings, superuser_only_at_startup
from proxy.db.turns import TURNS, default_slots
from proxy.pgserver import search_path
from proxy.pgserver.admission import ConnectionSlots
from proxy.pgserver.client_input import ClientGone, WireReader
from proxy.pgserver.login import log_failed_login, login, peer_host
from proxy.pgserver.notify_wire import SessionNotify
from proxy.pgserver.runner import Runner
from proxy.pgserver.session import Session, SessionIdentity
from proxy.pgserver.socket_output import SocketOutput
from proxy.pgserver.startup_options import startup_settings
from proxy.pgserver.tls import server_context
from proxy.wire import messages as m
from proxy.wire.errors import FatalError, PgError, ProtocolViolation

if TYPE_CHECKING:
    from proxy.execution.services import Services

log = logging.getLogger("hatiproxy.server")

OUTPUT_HIGH_WATER = 256 * 1024  # flush queued rows to the socket past this many bytes
STARTUP_TIMEOUT_S = 60.0
# At shutdown, how long running statements get to end after their interrupt (the whole
# shutdown must fit in proxy/cli/signals.py SHUTDOWN_LIMIT_S).
CLOSE_WAIT_S = 5.0
ADMIN_TERMINATION = FatalError("57P01", "terminating connection due to administrator command")


class Server:
    """The Postgres wire listener over the shared services (built by proxy.app)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = config = services.config
        self.engine = services.engine
        self.semantic = services.semantic
        self.agent = services.agent
        self.access = services.access
        self.metrics = services.metrics
        self.ssl_context = server_context(config)
        self.auth_method = config.effective_auth_method  # for configured users' passwords
        self.backends: Backends = self.engine.backends  # pid -> Backend, any thread
        self._pids = itertools.count(1000)
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()
        self.threads = ConnectionThreads()
        self.slots = ConnectionSlots(config.max_connections)  # admission.py
        self.notify_hub = self.engine.notify_hub  # LISTEN / NOTIFY between its sessions
        TURNS.slots = default_slots(config.running_connections)  # db/turns.py

    async def start(self) -> None:
        self._listener = listen_socket(self.config.host, self.config.port, backlog=511)
        self._listener.setblocking(False)
        self._accepting = asyncio.create_task(self._accept(self._listener))
        addrs = str(self._listener.getsockname()[:2])
        if self.access.trust:
            auth = "trust"
        else:
            auth = f"API keys (cleartext password; use TLS), users: {self.auth_method}"
        log.info("listening for Postgres clients on %s (auth: %s)", addrs, auth)
        if self.access.trust:
            log.warning("%s", self.access.trust_summary())

    @property
    def port(self) -> int:
        assert self._listener is not None
        return self._listener.getsockname()[1]

    async def serve_forever(self) -> None:
        await self._closed.wait()

    async def _accept(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(listener)
            except OSError as exc:  # e.g. out of file descriptors: retry, don't spin
                log.warning("accepting a client failed: %s", exc)
                await asyncio.sleep(0.1)
                continue
            # Small replies must not wait for Nagle's algorithm (~40 ms with delayed ACK).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.threads.start(self._serve_socket, sock)

    async def close(self) -> None:
        """Stop accepting, interrupt every statement, end every connection."""
        if self._accepting is not None:
            self._accepting.cancel()
            await asyncio.gather(self._accepting, return_exceptions=True)
        if self._listener is not None:
            self._listener.close()
        for backend in self.backends.all():
            backend.runner.interrupt("shutdown")  # a thread inside DuckDB sees no cancel
        await self.threads.stop(CLOSE_WAIT_S)
        self._closed.set()

    async def _serve_socket(self, sock: socket.socket) -> None:
        """One client, on its own thread's event loop."""
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[tuple[WireReader, asyncio.StreamWriter]] = loop.create_future()
        # asyncio.start_server's wiring, with the decoding WireReader as the reader; the
        # connected callback also makes start_tls treat this side as the server.
        await loop.connect_accepted_socket(
            lambda: asyncio.StreamReaderProtocol(
                WireReader(loop), lambda r, w: opened.set_result((r, w)), loop=loop
            ),
            sock,
        )
        reader, writer = await opened
        self.metrics.connection_opened()
        conn = Connection(self, reader, writer)
        try:
            await conn.run()
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("connection handler crashed")
        finally:
            self.slots.give(conn.has_slot)  # its session and cursor are released by now
            self.metrics.connection_closed()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def cancel(self, pid: int, secret_key: int) -> None:
        backend = self.backends.get(pid)
        # A wrong key does nothing, and says nothing (as in Postgres).
        if backend and hmac.compare_digest(
            backend.secret_key.to_bytes(4, "big", signed=True),
            secret_key.to_bytes(4, "big", signed=True),
        ):
            backend.runner.interrupt("cancel")

    def new_backend_id(self) -> tuple[int, int]:
        return next(self._pids), secrets.randbits(31)


class Connection:
    def __init__(self, server: Server, reader: WireReader, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.decoder = reader.decoder
        self._out: list[bytes | memoryview] = []
        self._out_size = 0
        self._output = SocketOutput(writer)
        self.runner: Runner | None = None
        self.pid: int | None = None  # set once this connection is listed in server.backends
        self.started = time.time()  # pg_stat_activity.backend_start
        self._loop: asyncio.AbstractEventLoop | None = None  # this connection's thread's
        self._task: asyncio.Task | None = None
        self._wake = asyncio.Event()  # a notification arrived for this (listening) session
        self._receiving: asyncio.Future[m.FrontendMessage] | None = None
        self._ending = False  # a FATAL was sent, or the connection is closing
        self.has_slot = False  # holds one of the server's max_connections slots
        reader.on_eof = self._client_gone

    # --- output --------------------------------------------------------------------

    def out(self, data: bytes | memoryview) -> None:
        self._out.append(data)
        self._out_size += len(data)

    def push(self) -> None:
        """Hand what is queued to the socket now, without waiting for it to drain: also
        from inside a statement that holds this thread (progress NOTICEs). A batch of
        rows alone in the queue goes as it is (a view of Arrow's buffer: no copy)."""
        if self._out:
            out = self._out
            self._output.write(out[0] if len(out) == 1 else b"".join(out))
            self._out.clear()
            self._out_size = 0

    async def flush(self) -> None:
        self.push()
        await self.writer.drain()

    async def flush_if_large(self) -> None:
        if self._out_size >= OUTPUT_HIGH_WATER:
            await self.flush()

    # --- input ---------------------------------------------------------------------

    def _client_gone(self) -> None:
        if self.runner is not None:
            self.runner.interrupt("disconnect")

    async def receive(self) -> m.FrontendMessage:
        return await self.reader.receive()

    # --- lifecycle -----------------------------------------------------------------

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        session: Session | None = None
        try:
            # One deadline for startup and the password exchange (like PG's
            # authentication_timeout): a silent client must not hold a socket forever.
            deadline = asyncio.get_running_loop().time() + STARTUP_TIMEOUT_S
            async with asyncio.timeout_at(deadline):
                startup = await self._startup()
            if startup is None:
                return
            session = await self._authenticate(startup, deadline)
            session.runner.observer = self.server.metrics
            while True:
                msg = await self._next_message(session)
                if not await session.handle(msg):
                    break
        except (ClientGone, ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except ProtocolViolation as exc:
            await self._fatal(exc)
        except FatalError as exc:
            await self._fatal(exc)
        finally:
            self._ending = True
            if self._receiving is not None:  # a listener's wait for its next message
                self._receiving.cancel()
            if self.pid is not None:
                self.server.backends.remove(self.pid)
            if session is not None:
                session.close()
                session.runner.notify.detach()
            if self.runner is not None:
                await self._release(self.runner)

    async def _next_message(self, session: Session) -> m.FrontendMessage:
        """The client's next message; while a LISTENing session waits for it, the
        notifications committed meanwhile go out as they arrive (when it is idle)."""
        notify = session.runner.notify
        if self._receiving is None:
            if not notify.listening():
                return await self.receive()
            self._receiving = asyncio.ensure_future(self.receive())
        receiving = self._receiving
        while not receiving.done():
            woken = asyncio.ensure_future(self._wake.wait())
            await asyncio.wait((receiving, woken), return_when=asyncio.FIRST_COMPLETED)
            woken.cancel()
            if self._wake.is_set():
                self._wake.clear()
                if session.idle:
                    for message in notify.messages():
                        self.out(message)
                    await self.flush()
        self._receiving = None
        return receiving.result()

    def _woken(self) -> None:
        """The hub's wake-up, from the notifying session's thread."""
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed: already gone
                self._loop.call_soon_threadsafe(self._wake.set)

    async def _release(self, runner: Runner) -> None:
        self.server.engine.watchdog.forget(runner)
        try:
            if runner.txn_status != "I" or runner.implicit:
                await runner.call(runner.cursor.rollback)
        except PgError:
            pass
        finally:
            try:
                await self.server.engine.run(runner.cursor.close)
            finally:
                runner.write.end()  # a write it left open rolled back with the cursor
                self.server.engine.databases.release(runner.engine)

    def terminate(self) -> None:
        """pg_terminate_backend: end this connection with FATAL 57P01; from any thread.

        A running statement is interrupted and fails with that FATAL (Runner.call); an
        idle session gets it from its own event loop.
        """
        if self.runner is not None:
            self.runner.interrupt("shutdown")
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed: already gone
                loop.call_soon_threadsafe(self._end_by_admin)

    def _end_by_admin(self) -> None:
        """On this connection's loop: send the FATAL and stop serving (unless ending)."""
        if self._ending or self._task is None:
            return
        self._ending = True
        with contextlib.suppress(Exception):  # whole messages were written before this one
            self.writer.write(m.error_response(ADMIN_TERMINATION.fields()))
        self._task.cancel()  # Connection.run's finally releases the session

    async def _fatal(self, exc: PgError) -> None:
        if self._ending:  # terminated meanwhile: that FATAL was sent
            return
        self._ending = True
        try:
            self.out(m.error_response(exc.fields()))
            await self.flush()
        except (ConnectionError, OSError):
            pass

    async def _startup(self) -> m.StartupMessage | None:
        ssl_negotiated = False
        while True:
            msg = await self.receive()
            match msg:
                case m.SSLRequest():
                    # Postgres answers a second SSLRequest with a FATAL error too.
                    if ssl_negotiated:
                        raise ProtocolViolation("SSLRequest received twice")
                    ssl_negotiated = True
                    ctx = self.server.ssl_context
                    if ctx is None or isinstance(
                        self.writer.get_extra_info("ssl_object"), ssl.SSLObject
                    ):
                        self.writer.write(b"N")
                        await self.writer.drain()
                        continue
                    if self.decoder.buffered:
                        raise ProtocolViolation("received unencrypted data after SSL request")
                    self.writer.write(b"S")
                    await self.writer.drain()
                    await self.writer.start_tls(ctx)
                case m.GSSENCRequest():
                    self.writer.write(b"N")
                    await self.writer.drain()
                case m.CancelRequest():
                    self.server.cancel(msg.process_id, msg.secret_key)
                    return None
                case m.StartupMessage():
                    self.decoder.startup_done()
                    return msg
                case _:
                    raise ProtocolViolation("expected a startup message")

    async def _authenticate(self, startup: m.StartupMessage, deadline: float) -> Session:
        server = self.server
        params = startup.params
        user = params.get("user", "")
        if not user:
            raise FatalError("28000", "no PostgreSQL user name specified in startup packet")
        if not server.slots.take(user):  # as PostgreSQL: refused at once, never queued
            raise FatalError("53300", "sorry, too many clients already")
        self.has_slot = True
        principal = await login(self, server.access, server.auth_method, user, deadline)
        pid, secret = server.new_backend_id()
        settings = SessionSettings(startup_settings(params, user))
        database = params.get("database") or user
        # the database it names (opened at first use), or the default one (databases.py)
        engine = await server.engine.run_uncounted(server.engine.databases.engine_for, database)
        try:
            runner = await server.engine.run(
                Runner, engine, settings, server.semantic, server.agent
            )
        except BaseException:
            server.engine.databases.release(engine)
            raise
        self.runner = runner
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            server.engine.watchdog.watch(runner, sock.fileno())
        peer = self.writer.get_extra_info("peername")
        tcp = isinstance(peer, tuple) and len(peer) >= 2
        remote = f"{peer[0]}:{peer[1]}" if tcp else "local"
        identity = SessionIdentity(
            user, params.get("database", user), pid, secret, dict(params), remote
        )
        session = Session(
            runner,
            identity,
            settings,
            self.out,
            self.flush,
            self.flush_if_large,
            self.receive,
            self.push,
            self.reader.sync_next,
        )
        access = server.access
        named = settings.values.get(AGENT_SETTING) or identity.startup.get(AGENT_SETTING)
        password_user = principal is None and not access.trust and user in access.passwords
        try:  # one rule on every interface (proxy/access/agent_rule.py)
            who = agent_rule.identity(access.config, principal, named, user, password_user)
        except AgentError as exc:  # an agent key naming another agent
            log_failed_login(user, peer_host(self.writer), exc.message)
            raise FatalError("28000", exc.message) from None
        superuser = is_superuser(who)
        if not engine.is_default and not superuser:  # a key (proxy/db/databases.py)
            if not engine.databases.admits(engine.database_name, who.org_id):
                raise FatalError(
                    "42501",
                    f'permission denied for database "{database}"',
                    detail="API keys connect to the server's default database and to the "
                    "databases their organisation created.",
                )
            who = dataclasses.replace(who, own_database=True)
        await runner.set_identity(who)
        if not who.superuser:  # its catalogs list only its organisation's objects
            await runner.call(org_scope.scope_to, runner.cursor, who.org_id)
        # scope: its database and organisation
        runner.notify = SessionNotify(
            server.notify_hub, pid, notify_scope(engine.database_name, who.org_id)
        )
        runner.notify.attach(self._woken)
        # Read-only, as in Postgres: what the login is, never what the client asked for.
        settings.values["is_superuser"] = "on" if superuser else "off"
        if not superuser:  # -c log_statement=... in the startup packet, as Postgres
            superuser_only_at_startup(settings.values)
        token = f"{pid}:{secrets.token_hex(16)}"
        await runner.call(runner.cursor.execute, backend_functions.token_sql(token))
        where = backend_functions.address_sql(self.writer.get_extra_info("sockname"), peer)
        await runner.call(runner.cursor.execute, where)  # inet_server_addr() & co.
        server.backends.add(
            Backend(
                pid,
                secret,
                runner,
                token=token,
                user=user,
                superuser=superuser,
                key_id=who.key_id,
                org_id=who.org_id,
                database=engine.database_name,
                datid=engine.database_oid,
                client_addr=str(peer[0]) if tcp else None,
                client_port=int(peer[1]) if tcp else -1,
                backend_start=self.started,
                settings=settings,
                activity=session.activity,
                notice=session.send_notice,
                terminate=self.terminate,
                notify=runner.notify,
            )
        )
        self.pid = pid
        self.out(m.authentication_ok())
        for name in REPORTED:
            self.out(m.parameter_status(name, settings.values.get(name, "")))
        self.out(m.backend_key_data(pid, secret))
        await _apply_startup_settings(runner, settings, session)
        self.out(m.ready_for_query("I"))
        await self.flush()
        return session


async def _apply_startup_settings(
    runner: Runner, settings: SessionSettings, session: Session
) -> None:
    """Startup values that also change DuckDB (TimeZone, search_path)."""
    from proxy.db.settings import DEFAULTS

    for name in ("TimeZone", "search_path", "statement_timeout"):
        value = settings.values.get(name)
        if value is not None and value != DEFAULTS.get(name):
            result = settings.set(name, value)
            if result.duckdb_sql:
                try:
                    await runner.call(search_path.run_setting, runner.cursor, result.duckdb_sql)
                except PgError as exc:
                    raise FatalError(exc.sqlstate, exc.message) from None
    tz = settings.values.get("TimeZone", "UTC")
    if tz == "UTC":
        await runner.call(runner.cursor.execute, "SET TimeZone = 'UTC'")
