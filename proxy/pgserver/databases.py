"""CREATE / DROP / ALTER ... RENAME DATABASE, with PostgreSQL's rules and errors.

The databases themselves are proxy/db/databases.py's. As in PostgreSQL, a database with
other sessions on it can be neither dropped (unless WITH (FORCE) ends them) nor copied
as a TEMPLATE: 55006 with how many there are. These commands refuse to run inside a
transaction block (25001, transpiler/outside_block.py): they cannot be undone.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from proxy.db.backends import is_superuser
from proxy.db.databases import DEFAULT_NAME, EMPTY_TEMPLATES, in_use_error
from proxy.wire.errors import PgError
from transpiler.database_ddl import DatabaseDdl

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner

_UTF8 = frozenset({"UTF8", "UTF-8", "UNICODE", "6"})
_FORCE_WAIT_S = 10.0  # how long DROP ... WITH (FORCE) waits for the sessions it ended
# PostgreSQL's CountOtherDBBackends waits 5 s for sessions ending meanwhile (a client's
# processes that have just exited) before it reports the others.
_OTHERS_WAIT_S = 5.0


async def run(runner: StatementRunner, session: ClientSession, ddl: DatabaseDdl) -> str:
    """Carry out `ddl`; its command tag."""
    _check_permission(runner, ddl)
    if ddl.action == "create":
        await _create(runner, ddl)
        return "CREATE DATABASE"
    if ddl.action == "rename":
        await _rename(runner, ddl)
        return "ALTER DATABASE"
    await _drop(runner, session, ddl)
    return "DROP DATABASE"


def _check_permission(runner: StatementRunner, ddl: DatabaseDdl) -> None:
    """Server superusers may do anything here. An API key: only its organisation's admin
    keys create a database (it is then the organisation's), copy one of the
    organisation's as a TEMPLATE, or drop or rename one the organisation created; a
    missing name is left to the 3D000 below, as PostgreSQL checks existence first."""
    who = runner.who
    if who is None or is_superuser(who):
        return
    admin = who.role == "admin"
    databases = runner.engine.databases
    if ddl.action == "create":
        if not admin:
            raise PgError(
                "42501",
                "permission denied to create database",
                hint="an organisation's admin API key or a server superuser may",
            )
        template = ddl.template
        if template is not None and template not in EMPTY_TEMPLATES:
            record = databases.created(template)
            if (
                record is None
                and template == DEFAULT_NAME
                or (record is not None and record.org != who.org_id)
            ):
                raise PgError("42501", f'permission denied to copy database "{template}"')
        return
    record = databases.created(ddl.name)
    if record is not None and (not admin or record.org != who.org_id):
        raise PgError("42501", f"must be owner of database {ddl.name}")


async def _others_after_wait(runner: StatementRunner, name: str) -> list:
    """The other sessions on database `name` still there after up to 5 s."""
    deadline = time.monotonic() + _OTHERS_WAIT_S
    while (others := _others(runner, name)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return others


def _others(runner: StatementRunner, name: str) -> list:
    """The other sessions connected to database `name`."""
    engine = runner.engine
    default = name == DEFAULT_NAME
    return [
        b
        for b in engine.backends.all()
        if (b.database == name or (default and b.database in ("", DEFAULT_NAME)))
        and b.runner is not runner
    ]


async def _create(runner: StatementRunner, ddl: DatabaseDdl) -> None:
    if ddl.encoding is not None and ddl.encoding not in _UTF8:
        raise PgError(
            "0A000",
            f'encoding "{ddl.encoding}" is not supported: hatiproxy databases are UTF8',
        )
    template = ddl.template
    if template is not None and template not in EMPTY_TEMPLATES:
        if runner.engine.database_name == template:  # this session is on it, as in PostgreSQL
            raise in_use_error(template, len(_others(runner, template)) + 1, source=True)
        if others := await _others_after_wait(runner, template):
            raise in_use_error(template, len(others), source=True)
    who = runner.who
    owner, org = DEFAULT_NAME, None
    if who is not None:
        owner = who.login[2] if is_superuser(who) else f"key {who.key_id}"
        org = None if is_superuser(who) else who.org_id
    databases = runner.engine.databases
    await runner.engine.run_uncounted(databases.create, ddl.name, owner, template, org)


async def _drop(runner: StatementRunner, session: ClientSession, ddl: DatabaseDdl) -> None:
    engine = runner.engine
    name = ddl.name
    if name == DEFAULT_NAME:
        raise PgError(
            "55006" if engine.is_default else "0A000",
            "cannot drop the currently open database"
            if engine.is_default
            else f'cannot drop the server\'s default database "{name}"',
        )
    if engine.databases.created(name) is None:
        if ddl.if_exists:
            session.send_notice(f'database "{name}" does not exist, skipping')
            return
        raise PgError("3D000", f'database "{name}" does not exist')
    if engine.database_name == name:
        raise PgError("55006", "cannot drop the currently open database")
    others = _others(runner, name) if ddl.force else await _others_after_wait(runner, name)
    if others and not ddl.force:
        raise in_use_error(name, len(others))
    for backend in others:  # WITH (FORCE): as pg_terminate_backend
        if backend.terminate is not None:
            backend.terminate()
    # Their cursors close as the sessions end (one connecting meanwhile: 55006 below).
    deadline = time.monotonic() + _FORCE_WAIT_S
    while engine.databases.in_use(name) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await engine.run_uncounted(engine.databases.drop, name)


async def _rename(runner: StatementRunner, ddl: DatabaseDdl) -> None:
    engine = runner.engine
    assert ddl.new_name is not None
    if ddl.name == DEFAULT_NAME or engine.database_name == ddl.name:
        what = "current database" if engine.database_name == ddl.name else "default database"
        raise PgError("0A000", f"{what} cannot be renamed")
    if engine.databases.created(ddl.name) is None:
        raise PgError("3D000", f'database "{ddl.name}" does not exist')
    if engine.databases.exists(ddl.new_name):
        raise PgError("42P04", f'database "{ddl.new_name}" already exists')
    if others := await _others_after_wait(runner, ddl.name):
        raise in_use_error(ddl.name, len(others))
    await engine.run_uncounted(engine.databases.rename, ddl.name, ddl.new_name)
