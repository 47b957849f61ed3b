"""`hatiproxy keys create | list | revoke | rotate`: API keys on the database file.

The CLI opens the DuckDB file itself, so it works while the server is stopped (for
the first admin key, say). A running server holds the file's lock; then the same
operations are available over REST with an admin key, and the error says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from proxy.access import keys
from proxy.access.scopes import ROLES
from proxy.core import config
from proxy.core.errors import AgentError


def _connect(cfg: config.Config) -> duckdb.DuckDBPyConnection:
    """The agent database, where keys live (proxy/db/agent_db.py)."""
    path = cfg.agent_database_path
    if path == ":memory:":
        raise ValueError("keys need a database file; ':memory:' keeps nothing")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(path)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise ValueError(
                f"{path} is in use by a running hatiproxy server. Stop it, or "
                "manage keys over REST with an admin key: POST /v1/organizations/<org>/api-keys "
                "(or agent-keys), DELETE .../api-keys/<id>, POST .../api-keys/<id>/rotate"
            ) from None
        raise


def _print_key(key: keys.ApiKey, as_json: bool, secret: str | None = None) -> None:
    data: dict[str, Any] = key.as_dict()
    if secret is not None:
        data = {"key": secret, **data}
    if as_json:
        print(json.dumps(data))
        return
    if secret is not None:
        print(secret)
        print("  (shown once: hatiproxy stores only its SHA-256)", file=sys.stderr)
    agent = f" agent={key.agent_id}" if key.agent_id else ""
    expires = f" expires={data['expires_at']}" if key.expires_at else ""
    limits = "".join(
        f"\n  {name}={','.join(data[name])}"
        for name in ("allowed_schemas", "allowed_tables")
        if data[name] is not None
    )
    print(
        f"  id={key.key_id} org={key.org_id}{agent} role={key.role} status={key.status()} "
        f"prefix={key.key_prefix}{expires}\n  scopes={','.join(sorted(key.scopes))}{limits}",
        file=sys.stderr if secret is not None else sys.stdout,
    )


def _names(value: str | None) -> list[str] | None:
    """'a, b' -> ['a', 'b']; not given -> None (no limit); '' -> [] (nothing)."""
    if value is None:
        return None
    return [n.strip() for n in value.split(",") if n.strip()]


def _run(args: argparse.Namespace) -> int:
    cfg = config.load(args)
    con = _connect(cfg)
    try:
        keys.ensure_schema(con)
        org = args.org or cfg.org_id
        if args.keys_command == "create":
            expires = None
            if args.expires_in_days:
                expires = datetime.now(UTC) + timedelta(days=args.expires_in_days)
            key, secret = keys.create_key(
                con,
                org,
                role=args.role,
                agent_id=args.agent,
                name=args.name or "",
                scopes=args.scopes,
                expires_at=expires,
                allowed_schemas=_names(args.allowed_schemas),
                allowed_tables=_names(args.allowed_tables),
            )
            _print_key(key, args.json, secret)
        elif args.keys_command == "list":
            found = keys.list_keys(con, None if args.all_orgs else org)
            if args.json:
                print(json.dumps([k.as_dict() for k in found]))
            for key in [] if args.json else found:
                _print_key(key, False)
        elif args.keys_command == "revoke":
            _print_key(keys.revoke_key(con, args.key_id), args.json)
        elif args.keys_command == "rotate":
            grace = timedelta(hours=args.grace_hours)
            new, secret, _old = keys.rotate_key(con, args.key_id, None, grace)
            _print_key(new, args.json, secret)
    except AgentError as exc:
        print(f"hatiproxy keys: {exc.message}", file=sys.stderr)
        return 1
    finally:
        con.close()
    return 0


def add_keys_command(sub: Any) -> None:
    parser = sub.add_parser("keys", help="create, list, revoke and rotate API keys")
    keys_sub = parser.add_subparsers(dest="keys_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="TOML config file")
        p.add_argument("--data-dir", dest="data_dir", default=None)
        p.add_argument("--database", default=None, help="DuckDB file (default <data_dir>/...)")
        p.add_argument("--org", default=None, help="organisation (default: org_id setting)")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=_run)

    create = keys_sub.add_parser("create", help="create a key and print its secret once")
    create.add_argument("--role", default="agent", help=f"one of {', '.join(ROLES)}")
    create.add_argument("--agent", default=None, help="bind the key to this agent (hd_agent_)")
    create.add_argument("--name", default=None)
    create.add_argument("--scopes", default=None, help="comma-separated; default = the role's")
    create.add_argument("--expires-in-days", dest="expires_in_days", type=int, default=None)
    create.add_argument(
        "--allowed-schemas",
        dest="allowed_schemas",
        default=None,
        help="comma-separated schemas the key's SQL may use (public = main); default: any",
    )
    create.add_argument(
        "--allowed-tables",
        dest="allowed_tables",
        default=None,
        help="comma-separated tables ('t' = public.t, or 'schema.t') the key's SQL may use",
    )
    common(create)
    listing = keys_sub.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--all-orgs", dest="all_orgs", action="store_true")
    common(listing)
    revoke = keys_sub.add_parser("revoke", help="revoke a key now")
    revoke.add_argument("key_id")
    common(revoke)
    rotate = keys_sub.add_parser("rotate", help="new secret, same grants; old one ends")
    rotate.add_argument("key_id")
    rotate.add_argument(
        "--grace-hours", dest="grace_hours", type=float, default=0.0, help="old key keeps working"
    )
    common(rotate)
