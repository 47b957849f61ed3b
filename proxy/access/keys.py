"""API keys, organisations and agents, stored in DuckDB (schema hatidata_internal).

A key is `hd_live_<32 base62>` (organisation key) or `hd_agent_<32 base62>` (bound
to one agent). The secret is shown once, at creation or rotation; only its SHA-256
is stored. A 190-bit random secret needs no slow hash: nobody can guess it, and
the digest cannot be reversed. Lookups go by digest, and the stored digest is then
compared with `hmac.compare_digest`, so timing says nothing about a near miss.

`KeyStore` functions take a DuckDB cursor, so the CLI (the database file opened
directly, server stopped) and the server (its pooled agent cursors) share them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from proxy.access.scopes import ROLES, normalise_role, parse_scopes
from proxy.access.table_limits import TableLimits, parse_schemas, parse_tables
from proxy.core.errors import AgentError
from proxy.core.identity import Identity, Meter
from proxy.core.names import INTERNAL_SCHEMA

T_ORGS = f"{INTERNAL_SCHEMA}.organizations"
T_AGENTS = f"{INTERNAL_SCHEMA}.agents"
T_KEYS = f"{INTERNAL_SCHEMA}.api_keys"
ORG_PREFIX = "hd_live_"
AGENT_PREFIX = "hd_agent_"
_ALPHABET = string.ascii_letters + string.digits
_SECRET_LEN = 32

SCHEMA_SQL = (
    f"CREATE SCHEMA IF NOT EXISTS {INTERNAL_SCHEMA}",
    f"CREATE TABLE IF NOT EXISTS {T_ORGS} (org_id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL,"
    " created_at TIMESTAMPTZ NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {T_AGENTS} (org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,"
    " framework VARCHAR, description VARCHAR, created_at TIMESTAMPTZ NOT NULL,"
    " PRIMARY KEY (org_id, agent_id))",
    f"CREATE TABLE IF NOT EXISTS {T_KEYS} (key_id UUID PRIMARY KEY, org_id VARCHAR NOT NULL,"
    " agent_id VARCHAR, name VARCHAR NOT NULL, role VARCHAR NOT NULL, scopes VARCHAR[] NOT NULL,"
    " key_prefix VARCHAR NOT NULL, key_hash VARCHAR NOT NULL UNIQUE,"
    " created_at TIMESTAMPTZ NOT NULL, expires_at TIMESTAMPTZ, revoked_at TIMESTAMPTZ,"
    " last_used_at TIMESTAMPTZ, rotated_to UUID)",
    # Added later: a database file from before gains them (NULL = not limited).
    f"ALTER TABLE {T_KEYS} ADD COLUMN IF NOT EXISTS allowed_schemas VARCHAR[]",
    f"ALTER TABLE {T_KEYS} ADD COLUMN IF NOT EXISTS allowed_tables VARCHAR[]",
)

KEY_COLUMNS = (
    "key_id::VARCHAR, org_id, agent_id, name, role, scopes, key_prefix, created_at, expires_at,"
    " revoked_at, last_used_at, rotated_to::VARCHAR, allowed_schemas, allowed_tables"
)


@dataclass(frozen=True)
class ApiKey:
    """A stored key: everything but its secret."""

    key_id: str
    org_id: str
    agent_id: str | None
    name: str
    role: str
    scopes: frozenset[str]
    key_prefix: str  # the first characters, for people to tell keys apart
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    rotated_to: str | None = None
    # Normalised (lower case, public = main; tables as 'schema.table'); None: no limit.
    allowed_schemas: frozenset[str] | None = None
    allowed_tables: frozenset[str] | None = None

    @property
    def limits(self) -> TableLimits | None:
        return TableLimits.of(self.allowed_schemas, self.allowed_tables)

    def status(self, now: datetime | None = None) -> str:
        now = now or datetime.now(UTC)
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of a key in the CLI and REST (never the secret)."""
        return {
            "id": self.key_id,
            "key_id": self.key_id,
            "org_id": self.org_id,
            "agent_id": self.agent_id,
            "agent_name": self.agent_id,
            "name": self.name,
            "role": self.role,
            "scopes": sorted(self.scopes),
            "key_prefix": self.key_prefix,
            "status": self.status(),
            "created_at": _iso(self.created_at),
            "expires_at": _iso(self.expires_at),
            "revoked_at": _iso(self.revoked_at),
            "last_used_at": _iso(self.last_used_at),
            "rotated_to": self.rotated_to,
            "allowed_schemas": _listed(self.allowed_schemas),
            "allowed_tables": _listed(self.allowed_tables),
        }


def _listed(names: frozenset[str] | None) -> list[str] | None:
    return None if names is None else sorted(names)


@dataclass(frozen=True)
class Principal:
    """Who an authenticated API key is: the org, maybe an agent, and what it may do."""

    key_id: str
    org_id: str
    agent_id: str | None  # set for hd_agent_ keys: the key acts only as this agent
    role: str
    scopes: frozenset[str]
    limits: TableLimits | None = None  # allowed_schemas / allowed_tables
    meter: Meter | None = field(default=None, compare=False, repr=False)

    def identity(self, agent_id: str | None = None, user: str = "") -> Identity:
        """The agent-layer identity for a request; an agent key cannot act as another agent."""
        if self.agent_id is not None:
            if agent_id not in (None, "", self.agent_id):
                raise AgentError.forbidden(
                    f"this API key is bound to agent {self.agent_id!r} and cannot act as "
                    f"{agent_id!r}"
                )
            agent_id = self.agent_id
        return Identity(
            self.org_id,
            agent_id or user or "api",
            user,
            scopes=self.scopes,
            role=self.role,
            key_id=self.key_id,
            limits=self.limits,
            meter=self.meter,
            key_agent=self.agent_id,
        )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def looks_like_key(secret: str) -> bool:
    return secret.startswith((ORG_PREFIX, AGENT_PREFIX))


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _new_secret(agent_id: str | None) -> str:
    prefix = AGENT_PREFIX if agent_id else ORG_PREFIX
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(_SECRET_LEN))


def row_to_key(row: tuple) -> ApiKey:
    return ApiKey(
        key_id=row[0],
        org_id=row[1],
        agent_id=row[2],
        name=row[3],
        role=row[4],
        scopes=frozenset(row[5]),
        key_prefix=row[6],
        created_at=row[7],
        expires_at=row[8],
        revoked_at=row[9],
        last_used_at=row[10],
        rotated_to=row[11],
        allowed_schemas=None if row[12] is None else frozenset(row[12]),
        allowed_tables=None if row[13] is None else frozenset(row[13]),
    )


def ensure_schema(cur: duckdb.DuckDBPyConnection) -> None:
    for sql in SCHEMA_SQL:
        cur.execute(sql)


def ensure_org(cur: duckdb.DuckDBPyConnection, org_id: str, name: str | None = None) -> None:
    cur.execute(
        f"INSERT INTO {T_ORGS} VALUES (?, ?, now()) ON CONFLICT DO NOTHING",
        [org_id, name or org_id],
    )


def ensure_agent(
    cur: duckdb.DuckDBPyConnection,
    org_id: str,
    agent_id: str,
    framework: str | None = None,
    description: str | None = None,
) -> None:
    cur.execute(
        f"INSERT INTO {T_AGENTS} VALUES (?, ?, ?, ?, now()) ON CONFLICT DO NOTHING",
        [org_id, agent_id, framework, description],
    )


def create_key(
    cur: duckdb.DuckDBPyConnection,
    org_id: str,
    *,
    role: str = "agent",
    agent_id: str | None = None,
    name: str = "",
    scopes: str | list[str] | None = None,
    expires_at: datetime | None = None,
    framework: str | None = None,
    description: str | None = None,
    allowed_schemas: list[str] | frozenset[str] | None = None,
    allowed_tables: list[str] | frozenset[str] | None = None,
) -> tuple[ApiKey, str]:
    """Create a key; returns (the stored key, its secret). The secret is never stored.

    allowed_schemas / allowed_tables limit the relations its SQL may name (see
    proxy/access/table_limits.py); None leaves that part unrestricted."""
    if not org_id:
        raise AgentError.invalid("org_id must not be empty")
    try:
        role = normalise_role(role)
        chosen = parse_scopes(scopes, role)
        schemas, tables = parse_schemas(allowed_schemas), parse_tables(allowed_tables)
    except ValueError as exc:
        raise AgentError.invalid(str(exc)) from None
    if expires_at is not None and expires_at <= datetime.now(UTC):
        raise AgentError.invalid("expires_at must be in the future")
    secret = _new_secret(agent_id)
    key_id = str(uuid.uuid4())
    ensure_org(cur, org_id)
    if agent_id:
        ensure_agent(cur, org_id, agent_id, framework, description)
    cur.execute(
        f"INSERT INTO {T_KEYS} (key_id, org_id, agent_id, name, role, scopes, key_prefix,"
        " key_hash, created_at, expires_at, allowed_schemas, allowed_tables)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, now(), ?, ?, ?)",
        [
            key_id,
            org_id,
            agent_id or None,
            name or (agent_id or role),
            role,
            sorted(chosen),
            secret[: len(secret) - _SECRET_LEN + 6],
            digest(secret),
            expires_at,
            _listed(schemas),
            _listed(tables),
        ],
    )
    return get_key(cur, key_id), secret


def set_limits(
    cur: duckdb.DuckDBPyConnection,
    key_id: str,
    allowed_schemas: list[str] | None,
    allowed_tables: list[str] | None,
) -> None:
    """Replace a key's allowed_schemas / allowed_tables (None: that part unrestricted)."""
    try:
        schemas, tables = parse_schemas(allowed_schemas), parse_tables(allowed_tables)
    except ValueError as exc:
        raise AgentError.invalid(str(exc)) from None
    cur.execute(
        f"UPDATE {T_KEYS} SET allowed_schemas = ?, allowed_tables = ? WHERE key_id = ?",
        [_listed(schemas), _listed(tables), key_id],
    )


def get_key(cur: duckdb.DuckDBPyConnection, key_id: str, org_id: str | None = None) -> ApiKey:
    """One key by id; another organisation's key is reported as not found."""
    try:
        uuid.UUID(str(key_id))
    except ValueError:
        raise AgentError.not_found(f"API key {key_id!r} not found") from None
    row = cur.execute(f"SELECT {KEY_COLUMNS} FROM {T_KEYS} WHERE key_id = ?", [key_id]).fetchone()
    if row is None or (org_id is not None and row[1] != org_id):
        raise AgentError.not_found(f"API key {key_id!r} not found")
    return row_to_key(row)


def list_keys(cur: duckdb.DuckDBPyConnection, org_id: str | None = None) -> list[ApiKey]:
    where, args = ("WHERE org_id = ?", [org_id]) if org_id is not None else ("", [])
    rows = cur.execute(
        f"SELECT {KEY_COLUMNS} FROM {T_KEYS} {where} ORDER BY created_at, key_id", args
    ).fetchall()
    return [row_to_key(r) for r in rows]


def revoke_key(cur: duckdb.DuckDBPyConnection, key_id: str, org_id: str | None = None) -> ApiKey:
    key = get_key(cur, key_id, org_id)
    if key.revoked_at is None:
        cur.execute(f"UPDATE {T_KEYS} SET revoked_at = now() WHERE key_id = ?", [key_id])
    return get_key(cur, key_id)


def rotate_key(
    cur: duckdb.DuckDBPyConnection,
    key_id: str,
    org_id: str | None = None,
    grace: timedelta = timedelta(0),
) -> tuple[ApiKey, str, ApiKey]:
    """A new secret with the old key's org, agent, role and scopes.

    The old key stops working now, or after `grace` so deployments can switch over.
    Returns (new key, new secret, old key as it is now).
    """
    old = get_key(cur, key_id, org_id)
    if old.status() != "active":
        raise AgentError.conflict(f"API key {key_id!r} is {old.status()} and cannot be rotated")
    new, secret = create_key(
        cur,
        old.org_id,
        role=old.role,
        agent_id=old.agent_id,
        name=old.name,
        scopes=sorted(old.scopes),
        expires_at=old.expires_at,
        allowed_schemas=old.allowed_schemas,
        allowed_tables=old.allowed_tables,
    )
    if grace > timedelta(0):
        cur.execute(
            f"UPDATE {T_KEYS} SET rotated_to = ?, expires_at = least(coalesce(expires_at,"
            " now() + ?), now() + ?) WHERE key_id = ?",
            [new.key_id, grace, grace, key_id],
        )
    else:
        cur.execute(
            f"UPDATE {T_KEYS} SET rotated_to = ?, revoked_at = now() WHERE key_id = ?",
            [new.key_id, key_id],
        )
    return new, secret, get_key(cur, key_id)


def lookup(cur: duckdb.DuckDBPyConnection, secret: str) -> ApiKey | None:
    """The stored key for a presented secret, whatever its status (None: no such key)."""
    if not looks_like_key(secret) or len(secret) > 128:
        return None
    wanted = digest(secret)
    row = cur.execute(
        f"SELECT {KEY_COLUMNS}, key_hash FROM {T_KEYS} WHERE key_hash = ?", [wanted]
    ).fetchone()
    if row is None or not hmac.compare_digest(row[-1], wanted):
        return None
    return row_to_key(row[:-1])


def principal_of(key: ApiKey, meter: Meter | None = None) -> Principal:
    return Principal(key.key_id, key.org_id, key.agent_id, key.role, key.scopes, key.limits, meter)


def has_keys(cur: duckdb.DuckDBPyConnection) -> bool:
    return cur.execute(f"SELECT count(*) FROM {T_KEYS}").fetchone()[0] > 0


KNOWN_ROLES = tuple(ROLES)
