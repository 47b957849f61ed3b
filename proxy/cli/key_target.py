"""Where `hatiproxy keys` acts: the running server (its local admin channel) or, when no
server runs on the data directory, the database itself.

`find_target` reads `<data_dir>/hatiproxy-admin.json` (proxy/core/admin_channel.py). When
its server answers, every operation is a call to the public REST key routes on the
channel's loopback URL with the channel's token (the server superuser), so the key works
at once and the server's key cache stays right. A file whose pid is gone or whose URL does
not answer is stale: it is reported, removed, and the database is opened directly, with
the server's own construction code (`Services.open_keys`). Nothing here ever creates a
data directory or a database: a missing one is an error naming it (`KeysError`, exit 1).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from proxy.core import admin_channel
from proxy.core.config import Config
from proxy.core.errors import AgentError

POINT_AT_SERVER = (
    "Point at the server's data directory with --data-dir DIR (or HATIDATA_DATA_DIR, or "
    "data_dir in the --config file), as given to `hatiproxy serve`."
)


class KeysError(Exception):
    """A failure to report in one line (exit code 1)."""


@dataclass
class KeySpec:
    role: str
    agent: str | None
    name: str | None
    scopes: list[str] | None
    expires_in_days: int | None
    allowed_schemas: list[str] | None
    allowed_tables: list[str] | None


class ServerTarget:
    """The running server, through the REST key routes on its local admin channel."""

    def __init__(self, channel: admin_channel.Channel, info: dict[str, Any]) -> None:
        self.channel = channel
        self.database = str(info["database"])
        self.default_org = str(info["org_id"])
        self.where = (
            f"database {self.database} via the server on {info['wire']} (pid {info['pid']})"
        )

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return call(self.channel, method, path, body)

    def create(self, org: str, spec: KeySpec) -> tuple[dict[str, Any], str]:
        body: dict[str, Any] = {"role": spec.role}
        for name, value in (
            ("scopes", spec.scopes),
            ("expires_in_days", spec.expires_in_days),
            ("allowed_schemas", spec.allowed_schemas),
            ("allowed_tables", spec.allowed_tables),
        ):
            if value is not None:
                body[name] = value
        base = f"/v1/organizations/{org}"
        if spec.agent:
            made = self._call("POST", f"{base}/agent-keys", {"agent_name": spec.agent, **body})
            if spec.name:
                self._call("PUT", f"{base}/agent-keys/{made['key_id']}", {"name": spec.name})
                made["name"] = spec.name
        else:
            if spec.name:
                body["name"] = spec.name
            made = self._call("POST", f"{base}/api-keys", body)
        secret = made.pop("raw_key")
        for extra in ("framework", "description"):
            made.pop(extra, None)
        return made, secret

    def list(self, org: str | None) -> list[dict[str, Any]]:
        keys = self._call("GET", "/v1/admin/api-keys")
        return [k for k in keys if org is None or k["org_id"] == org]

    def _key(self, key_id: str) -> dict[str, Any]:
        for key in self.list(None):
            if key["key_id"] == key_id:
                return key
        raise KeysError(f"API key {key_id!r} not found")

    def _route(self, key: dict[str, Any]) -> str:
        kind = "agent-keys" if key["agent_id"] else "api-keys"
        return f"/v1/organizations/{key['org_id']}/{kind}/{key['key_id']}"

    def revoke(self, key_id: str) -> dict[str, Any]:
        self._call("DELETE", self._route(self._key(key_id)))
        return self._key(key_id)

    def rotate(self, key_id: str, grace_hours: int) -> tuple[dict[str, Any], str]:
        done = self._call(
            "POST", self._route(self._key(key_id)) + "/rotate", {"grace_period_hours": grace_hours}
        )
        return self._key(done["new_key_id"]), done["new_key"]

    def close(self) -> None:
        pass


def call(channel: admin_channel.Channel, method: str, path: str, body: Any = None) -> Any:
    """One request on the admin channel; KeysError with the server's message on failure."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(channel.url + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {channel.token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("message") or exc.reason
        except ValueError:
            message = exc.reason
        raise KeysError(str(message)) from None
    return json.loads(raw) if raw else None


class DatabaseTarget:
    """The database opened directly (no server runs on it), as the server opens it."""

    def __init__(self, config: Config) -> None:
        import duckdb

        from proxy.db.engine import DatabaseInUse
        from proxy.execution.services import Services

        self.database = config.database_path
        self.default_org = config.org_id
        self.where = f"database {self.database} (opened directly: no server is running on it)"
        try:
            self.engine, self.access = Services.open_keys(config)
        except DatabaseInUse as exc:
            raise KeysError(
                f"{exc} No admin channel file ({admin_channel.path_in(config.data_dir)}) "
                "says how to reach it: stop it, or manage keys over REST with an admin key."
            ) from None
        except (OSError, duckdb.Error) as exc:
            raise KeysError(f"cannot open database {self.database}: {exc}") from None
        self.loop = asyncio.new_event_loop()

    def _run(self, coro: Any) -> Any:
        try:
            return self.loop.run_until_complete(coro)
        except AgentError as exc:
            raise KeysError(exc.message) from None

    def create(self, org: str, spec: KeySpec) -> tuple[dict[str, Any], str]:
        expires = None
        if spec.expires_in_days:
            expires = datetime.now(UTC) + timedelta(days=spec.expires_in_days)
        key, secret = self._run(
            self.access.create_key(
                org,
                role=spec.role,
                agent_id=spec.agent,
                name=spec.name or "",
                scopes=spec.scopes,
                expires_at=expires,
                allowed_schemas=spec.allowed_schemas,
                allowed_tables=spec.allowed_tables,
            )
        )
        return key.as_dict(), secret

    def list(self, org: str | None) -> list[dict[str, Any]]:
        return [k.as_dict() for k in self._run(self.access.list_keys(org))]

    def revoke(self, key_id: str) -> dict[str, Any]:
        return self._run(self.access.revoke_key(key_id, None)).as_dict()

    def rotate(self, key_id: str, grace_hours: int) -> tuple[dict[str, Any], str]:
        new, secret, _old = self._run(
            self.access.rotate_key(key_id, None, timedelta(hours=grace_hours))
        )
        return new.as_dict(), secret

    def close(self) -> None:
        from proxy.execution.services import Services

        self.loop.close()
        Services.close_keys(self.engine, self.access)


def _server(config: Config, explicit_database: bool) -> ServerTarget | None:
    """The server running on config's data directory, or None (a stale file is removed)."""
    path = admin_channel.path_in(config.data_dir)
    try:
        channel = admin_channel.read(config.data_dir)
    except PermissionError:
        raise KeysError(
            f"cannot read the admin channel file {path}: it belongs to the OS user running "
            "the server; run `hatiproxy keys` as that user"
        ) from None
    if channel is None:
        return None
    info = None
    if admin_channel.pid_alive(channel.pid):
        try:
            info = call(channel, "GET", "/v1/admin/server")
        except (KeysError, OSError, ValueError):
            info = None
    if info is None or int(info.get("pid", -1)) != channel.pid:
        print(
            f"hatiproxy keys: ignoring the stale admin channel file {path}: the server "
            f"(pid {channel.pid}) that wrote it is gone",
            file=sys.stderr,
        )
        admin_channel.remove(config.data_dir, channel.token)
        return None
    target = ServerTarget(channel, info)
    if explicit_database and not _same_file(config.database_path, target.database):
        raise KeysError(
            f"the server running on data directory {config.data_dir} serves "
            f"{target.database}, not {config.database_path}: drop --database, or point "
            "--data-dir at the data directory of the server that serves it"
        )
    return target


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def find_target(config: Config) -> ServerTarget | DatabaseTarget:
    """The running server of config's data directory, else its existing database file."""
    data_dir = Path(config.data_dir)
    explicit = bool(config.database)
    server = _server(config, explicit) if data_dir.is_dir() else None
    if server is not None:
        return server
    database = config.database_path
    if database == ":memory:":
        raise KeysError(
            "--database :memory: keeps no keys, and no server is running on data directory "
            f"{data_dir}. {POINT_AT_SERVER}"
        )
    if not explicit and not data_dir.is_dir():
        raise KeysError(
            f"data directory {data_dir} does not exist: no hatiproxy server has used it, and "
            f"`hatiproxy keys` never creates one. {POINT_AT_SERVER}"
        )
    if not Path(database).is_file():
        raise KeysError(
            f"database {database} does not exist and no server is running on data directory "
            f"{data_dir}; `hatiproxy keys` never creates a database. {POINT_AT_SERVER} "
            "Or start the server once (it creates the database), then run this again."
        )
    return DatabaseTarget(config)
