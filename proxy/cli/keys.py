"""`hatiproxy keys create | list | revoke | rotate`: API keys of a server's database.

While a server runs on the data directory, the CLI acts through it (its local admin
channel, proxy/cli/key_target.py), so a new key works at once; otherwise it opens the
database file itself. It never creates a data directory or a database, and it says on
stderr which database it acted on and how. Secrets are printed once, as `raw_key` in
--json output (the REST routes' field), alone on stdout otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from proxy.access.scopes import ROLES
from proxy.cli.key_target import KeysError, KeySpec, find_target
from proxy.core import config


def _print_key(data: dict[str, Any], as_json: bool, secret: str | None = None) -> None:
    if secret is not None:
        data = {"raw_key": secret, **data}
    if as_json:
        print(json.dumps(data))
        return
    if secret is not None:
        print(secret)
        print("  (shown once: hatiproxy stores only its SHA-256)", file=sys.stderr)
    agent = f" agent={data['agent_id']}" if data.get("agent_id") else ""
    expires = f" expires={data['expires_at']}" if data.get("expires_at") else ""
    limits = "".join(
        f"\n  {name}={','.join(data[name])}"
        for name in ("allowed_schemas", "allowed_tables")
        if data.get(name) is not None
    )
    print(
        f"  id={data['key_id']} org={data['org_id']}{agent} role={data['role']} "
        f"status={data['status']} prefix={data['key_prefix']}{expires}\n"
        f"  scopes={','.join(sorted(data['scopes']))}{limits}",
        file=sys.stderr if secret is not None else sys.stdout,
    )


def _names(value: str | None) -> list[str] | None:
    """'a, b' -> ['a', 'b']; not given -> None (no limit); '' -> [] (nothing)."""
    if value is None:
        return None
    return [n.strip() for n in value.split(",") if n.strip()]


_DONE = {
    "create": "key created",
    "list": "keys listed",
    "revoke": "key revoked",
    "rotate": "key rotated",
}


def _run(args: argparse.Namespace) -> int:
    cfg = config.load(args)
    try:
        target = find_target(cfg)
    except KeysError as exc:
        print(f"hatiproxy keys: {exc}", file=sys.stderr)
        return 1
    try:
        org = args.org or target.default_org
        if args.keys_command == "create":
            spec = KeySpec(
                role=args.role,
                agent=args.agent,
                name=args.name,
                scopes=_names(args.scopes),
                expires_in_days=args.expires_in_days,
                allowed_schemas=_names(args.allowed_schemas),
                allowed_tables=_names(args.allowed_tables),
            )
            data, secret = target.create(org, spec)
            _print_key(data, args.json, secret)
        elif args.keys_command == "list":
            found = target.list(None if args.all_orgs else org)
            if args.json:
                print(json.dumps(found))
            for key in [] if args.json else found:
                _print_key(key, False)
        elif args.keys_command == "revoke":
            _print_key(target.revoke(args.key_id), args.json)
        elif args.keys_command == "rotate":
            data, secret = target.rotate(args.key_id, args.grace_hours)
            _print_key(data, args.json, secret)
    except KeysError as exc:
        print(f"hatiproxy keys: {exc} ({target.where})", file=sys.stderr)
        return 1
    finally:
        target.close()
    print(f"hatiproxy keys: {_DONE[args.keys_command]} in {target.where}", file=sys.stderr)
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
        "--grace-hours",
        dest="grace_hours",
        type=int,
        default=0,
        help="whole hours the old key keeps working (0: revoked now)",
    )
    common(rotate)
