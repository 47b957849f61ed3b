"""Access control for a running server: one place that answers "who is this?".

The wire server, MCP over HTTP and the REST API all ask `AccessControl`:
- `mode()` says whether a credential is needed at all. Trust (no credential) holds
  only while no users are configured and no API key exists, or when auth_method is
  explicitly `trust`, and only for loopback clients unless allow_remote_trust.
- `authenticate(secret)` turns an API key into a `Principal`, or raises AuthError.
  Keys are cached by digest after the first lookup; revocation and rotation through
  this object drop the cache entry, and nothing else can change keys while the
  server holds the database file, except, with `lake_catalog`, other proxies of the
  lake: their key writes reach this one through shared_keys.py, which drops the
  changed keys from the cache too.
- `identity_from_header(...)` is the HTTP form: `Authorization: ApiKey KEY` or
  `Bearer KEY` (a configured user's password also works, as that user).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import ipaddress
import logging
import shutil
import sys
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from proxy.access import agent_rule, ownership, stored_sql
from proxy.access import keys as k
from proxy.access.shared_keys import SharedKeys
from proxy.access.throttle import AuthThrottle, Banned
from proxy.access.usage import KeyMeter, UsageTracker
from proxy.core.config import Config
from proxy.core.identity import Identity
from proxy.db.agent_lake_poll import LakePoller
from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.access")


class AuthError(Exception):
    """Missing or bad credentials (wire 28P01 / HTTP 401)."""


class TooManyFailures(AuthError):
    """This source failed to authenticate too often (wire 28000 / HTTP 429)."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(
            f"too many failed authentication attempts from this address; "
            f"retry in {retry_after:.0f} s"
        )


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return host == "localhost"


class ServiceHost(Protocol):
    """Where keys live and whose start/stop the usage counters join (the AgentLayer)."""

    config: Config
    db: PooledDB  # the agent database: keys, usage, object owners
    users_db: PooledDB  # the users' database: the objects owners own, its catalog
    lake: LakePoller | None  # with a DuckLake catalog: the agent lake's poller

    def add_service(self, service: Any) -> None: ...


class AccessControl:
    def __init__(self, layer: ServiceHost) -> None:
        self.layer = layer
        self.config = layer.config
        self.passwords: dict[str, str] = self.config.user_passwords
        self._cache: dict[str, k.ApiKey] = {}
        self._any_keys = False
        self.throttle = AuthThrottle(self.config.auth_failure_limit, self.config.auth_ban_seconds)
        interval = float(getattr(self.config, "access_tracker_flush_interval_secs", 60))
        self.usage = UsageTracker(layer.db, interval)
        layer.add_service(self.usage)  # flushed with the layer's other counters, and at stop
        layer.db.run_sync(k.ensure_schema)
        layer.db.run_sync(lambda cur: k.ensure_org(cur, self.config.org_id))
        # Who owns which table, view, macro, ... (records where no client SQL reaches them;
        # the objects and the catalog that shows their owners are the users').
        self.owners = ownership.install(layer.db, layer.users_db)
        layer.add_service(self.owners)  # released when the layer stops
        layer.users_db.run_sync(stored_sql.refresh)  # views and macros keys may reach through
        self._any_keys = layer.db.run_sync(k.has_keys)
        # With a DuckLake catalog: keys shared with the other proxies (shared_keys.py).
        self.shared: SharedKeys | None = None
        if getattr(self.config, "lake_catalog", ""):
            self.shared = SharedKeys(layer.db, self._changed_elsewhere, layer.lake)
            layer.add_service(self.shared)

    def _changed_elsewhere(self, key_ids: list[str]) -> None:
        for key_id in key_ids:
            self.forget(key_id)
        self._any_keys = True

    async def _publish(
        self, key_ids: list[str], org: str | None = None, agent: str | None = None
    ) -> None:
        """A key write made here, to the other proxies of the lake before we answer."""
        if self.shared is not None:
            agents = [(org, agent)] if org and agent else []
            await self.shared.publish(key_ids, [org] if org else [], agents)

    async def _synced(self) -> None:
        """Before managing keys: what other proxies of the lake wrote, applied here (one
        catalog query when nothing changed), so a key made elsewhere can be revoked here."""
        if self.shared is not None:
            await self.shared.catch_up()

    async def published(self, key_ids: list[str], org: str, agent: str | None = None) -> None:
        """For callers that change a key's or an agent's row themselves (REST renames)."""
        for key_id in key_ids:
            self.forget(key_id)
        await self._publish(key_ids, org, agent)

    # -- mode -------------------------------------------------------------------------
    @property
    def trust(self) -> bool:
        """No credential needed (still loopback-only unless allow_remote_trust)."""
        method = self.config.auth_method
        if method:
            return method == "trust"
        return not self.passwords and not self._any_keys

    def trust_allowed(self, host: str | None) -> bool:
        return self.trust and (is_loopback(host) or self.config.allow_remote_trust)

    # -- brute-force slowing (all interfaces share one count per source address) -------
    def check_banned(self, source: str | None) -> None:
        """Raise TooManyFailures while `source` is banned (checked before any credential)."""
        try:
            self.throttle.delay(source or "")
        except Banned as exc:
            raise TooManyFailures(exc.retry_after) from None

    async def penalise(self, source: str | None) -> None:
        """Count a failed attempt and answer it slowly once the source fails repeatedly.

        Successes do not reset the count (a valid key must not launder guesses at
        weaker user passwords); failures age out of the throttle's window instead.
        """
        self.throttle.failure(source or "")
        try:
            wait = self.throttle.delay(source or "")
        except Banned:
            wait = 0.0
        if wait:
            await asyncio.sleep(wait)

    # -- keys -------------------------------------------------------------------------
    async def authenticate(self, secret: str, interface: str = "wire") -> k.Principal:
        """The principal of an API key; AuthError when unknown, revoked or expired.

        Each success is one request of `interface` (wire: a login) in the key's usage."""
        if not k.looks_like_key(secret):
            raise AuthError("not an API key")
        key = await self._lookup(secret)
        if key is None:
            raise AuthError("unknown API key")
        status = key.status()
        if status != "active":
            raise AuthError(f"API key is {status}")
        self.usage.request(key.key_id, interface)
        return k.principal_of(key, KeyMeter(self.usage, key.key_id))

    async def _lookup(self, secret: str) -> k.ApiKey | None:
        """The stored key of a secret (cached by digest), whatever its status."""
        hashed = k.digest(secret)
        key = self._cache.get(hashed)
        if key is None:
            key = await self.layer.db.run(lambda cur: k.lookup(cur, secret))
            if key is None and self.shared is not None:  # created on another proxy
                key = await self.shared.lookup(secret)
            if key is not None:
                self._cache[hashed] = key
        return key

    async def bucket_of(self, authorization: str) -> str | None:
        """Whom a request's rate-limit bucket belongs to: the id of an active API key, or
        `user:<name>` for a configured user's password; None for anything else (the
        caller is then counted by source address). Records no use and no failure."""
        scheme, _, secret = authorization.strip().partition(" ")
        secret = secret.strip()
        if not secret or scheme.lower() not in ("apikey", "bearer"):
            return None
        if k.looks_like_key(secret):
            key = await self._lookup(secret)
            return key.key_id if key is not None and key.status() == "active" else None
        for user in self.passwords:
            if self.user_password_ok(user, secret):
                return "user:" + user
        return None

    def forget(self, key_id: str) -> None:
        """Drop a changed key from the cache (after revoke / rotate)."""
        for hashed, key in list(self._cache.items()):
            if key.key_id == key_id:
                del self._cache[hashed]

    async def create_key(self, org_id: str, **kw: Any) -> tuple[k.ApiKey, str]:
        was_trust = self.trust
        result = await self.layer.db.transaction(lambda cur: k.create_key(cur, org_id, **kw))
        self._any_keys = True
        await self._publish([result[0].key_id], org_id, result[0].agent_id)
        if was_trust and not self.trust:
            log.warning(
                "trust mode ended: API key %s (%s, org %s) is the first key, so keyless "
                "clients are now refused on every interface (psql without a password, MCP "
                "and REST without 'Authorization: ApiKey <key>'). Give clients a key: as the "
                "password over the wire, in that header over HTTP, `hatiproxy mcp --api-key`; "
                "create more with `%s keys create` (it reaches this server through "
                "its local admin channel) or POST /v1/organizations/%s/api-keys",
                result[0].key_prefix,
                result[0].role,
                org_id,
                cli_program(),
                org_id,
            )
        return result

    def trust_summary(self) -> str:
        """What a keyless caller may do in trust mode, for the start-up log."""
        where = "any address" if self.config.allow_remote_trust else "loopback clients only"
        return (
            f"TRUST MODE (development only; {where}): no password or API key is asked on "
            "any interface. A keyless caller is a server superuser: it reads and changes "
            "every table, and the memories, state, ledger and triggers of every agent of "
            f"organisation {self.config.org_id!r}. Its identity is self-declared: it is the "
            "agent it names (hatidata_agent_id over SQL, X-HatiData-Agent-Id over HTTP, "
            f"agent_id over REST), else {self.config.default_agent!r}. Creating the first API "
            f"key ends trust mode: `{cli_program()} keys create --role admin --data-dir "
            f"{self.config.data_dir}`"
        )

    async def list_keys(self, org_id: str | None) -> list[k.ApiKey]:
        await self._synced()
        return [
            self._fresh(key)
            for key in await self.layer.db.run(lambda cur: k.list_keys(cur, org_id))
        ]

    async def get_key(self, key_id: str, org_id: str | None) -> k.ApiKey:
        await self._synced()
        return self._fresh(await self.layer.db.run(lambda cur: k.get_key(cur, key_id, org_id)))

    def _fresh(self, key: k.ApiKey) -> k.ApiKey:
        """The key with its last use counted but not flushed yet (usage is batched)."""
        seen = self.usage.last_used(key.key_id)
        if seen is None or (key.last_used_at is not None and key.last_used_at >= seen):
            return key
        return dataclasses.replace(key, last_used_at=seen)

    async def revoke_key(self, key_id: str, org_id: str | None) -> k.ApiKey:
        await self._synced()
        key = await self.layer.db.transaction(lambda cur: k.revoke_key(cur, key_id, org_id))
        self.forget(key_id)
        await self._publish([key_id])
        return key

    async def set_limits(
        self, key_id: str, schemas: list[str] | None, tables: list[str] | None
    ) -> None:
        """New allowed_schemas / allowed_tables; they apply from the key's next login or
        request (open wire sessions keep the limits they logged in with)."""
        await self._synced()
        await self.layer.db.transaction(lambda cur: k.set_limits(cur, key_id, schemas, tables))
        self.forget(key_id)
        await self._publish([key_id])

    async def rotate_key(
        self, key_id: str, org_id: str | None, grace: timedelta = timedelta(0)
    ) -> tuple[k.ApiKey, str, k.ApiKey]:
        await self._synced()
        result = await self.layer.db.transaction(
            lambda cur: k.rotate_key(cur, key_id, org_id, grace)
        )
        self.forget(key_id)
        await self._publish([result[0].key_id, key_id])
        return result

    # -- passwords of configured users ----------------------------------------------------
    def user_password_ok(self, user: str, password: str) -> bool:
        expected = self.passwords.get(user)
        return expected is not None and hmac.compare_digest(
            expected.encode("utf-8"), password.encode("utf-8")
        )

    # -- HTTP -----------------------------------------------------------------------------
    async def identity_from_header(
        self, headers: Mapping[str, str], client_host: str | None, interface: str = "mcp"
    ) -> Identity:
        """Who an HTTP request is (REST, MCP). AuthError (401) when it is nobody."""
        return (await self.resolve(headers, client_host, interface))[0]

    async def resolve(
        self, headers: Mapping[str, str], client_host: str | None, interface: str = "rest"
    ) -> tuple[Identity, k.Principal | None]:
        """(identity, the API key's principal or None) of an HTTP request on `interface`."""
        scheme, _, secret = (headers.get("authorization") or "").strip().partition(" ")
        if secret.strip():
            try:
                self.check_banned(client_host)
            except TooManyFailures as exc:
                _log_failure(interface, client_host, str(exc))
                raise
        try:
            return await self._resolve(headers, client_host, interface)
        except TooManyFailures:
            raise
        except AuthError as exc:
            _log_failure(interface, client_host, str(exc))
            if secret.strip():
                await self.penalise(client_host)
            raise

    async def _resolve(
        self, headers: Mapping[str, str], client_host: str | None, interface: str
    ) -> tuple[Identity, k.Principal | None]:
        scheme, _, secret = (headers.get("authorization") or "").strip().partition(" ")
        secret = secret.strip()
        agent = agent_rule.named(headers.get(agent_rule.AGENT_HEADER))
        if not secret or scheme.lower() not in ("apikey", "bearer"):
            if self.trust_allowed(client_host):
                return agent_rule.identity(self.config, None, agent), None
            raise AuthError("missing credentials: send 'Authorization: ApiKey <key>'")
        if k.looks_like_key(secret):
            principal = await self.authenticate(secret, interface)
            return agent_rule.identity(self.config, principal, agent), principal
        for user in self.passwords:
            if self.user_password_ok(user, secret):
                return agent_rule.identity(self.config, None, agent, user, True), None
        raise AuthError("invalid API key")


def _log_failure(interface: str, client_host: str | None, reason: str) -> None:
    """One WARNING per refused REST / MCP request: where from and why; never the key."""
    log.warning("failed %s authentication from %s: %s", interface, client_host or "unknown", reason)


def cli_program() -> str:
    """The `hatiproxy` command as a shell reaches it, for hints in the log: `hatiproxy` when
    the PATH finds this installation's, else its full path (after `.ci/install` it is
    `.venv/bin/hatiproxy`, which a newcomer's PATH does not hold)."""
    beside = Path(sys.executable).parent / "hatiproxy"
    if not beside.exists():
        return "hatiproxy"
    found = shutil.which("hatiproxy")
    if found and Path(found).resolve() == beside.resolve():
        return "hatiproxy"
    return str(beside)
