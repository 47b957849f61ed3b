"""ClientSession commands the proxy answers itself: SET, RESET, SHOW, transactions, utilities."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from proxy.db.catalog import snapshot as catalog_snapshot
from proxy.pgserver import (
    databases,
    domains,
    foreign_keys,
    maintenance,
    object_comments,
    search_path,
    temp_on_commit,
    triggers,
)
from proxy.pgserver.results import Column, row_description
from proxy.semantic import column_hints
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import Statement
from transpiler.database_ddl import DatabaseDdl
from transpiler.domains import DomainDdl
from transpiler.maintenance import ri_trigger_switch
from transpiler.model import (
    CommentCommand,
    ResetCommand,
    SetCommand,
    ShowCommand,
    TransactionCommand,
    UtilityCommand,
)
from transpiler.notify_statements import NotifyStatement

if TYPE_CHECKING:
    from proxy.db.settings import SetResult
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


def describe(st: Statement) -> tuple[Column, ...] | None:
    cmd = st.command
    if isinstance(cmd, ShowCommand):
        if cmd.name == "all":
            return (
                Column("name", "VARCHAR"),
                Column("setting", "VARCHAR"),
                Column("description", "VARCHAR"),
            )
        return (Column(_show_column(cmd.name), "VARCHAR"),)
    return None


def _show_column(name: str) -> str:
    from proxy.db.settings import canonical

    return canonical(name).lower() if "." not in name else name


async def run(
    runner: StatementRunner, session: ClientSession, portal: Portal, describe_rows: bool
) -> None:
    st = portal.statement
    assert st is not None
    cmd = st.command
    match cmd:
        case SetCommand():
            if runner.txn_status == "I" and cmd.local:
                what = (
                    "SET TRANSACTION" if cmd.name == "transaction_characteristics" else "SET LOCAL"
                )
                session.send_notice(
                    f"{what} can only be used in transaction blocks", "25P01", "WARNING"
                )
                tag = "SET"
            else:
                before = runner.settings.snapshot()
                try:
                    await _apply(
                        runner, session, [runner.settings.set(cmd.name, cmd.value, local=cmd.local)]
                    )
                except PgError:  # DuckDB refused it (a time zone): SHOW keeps the old value
                    runner.settings.restore(before)
                    raise
                tag = "SET"
        case ResetCommand():
            await _apply(runner, session, runner.settings.reset(cmd.name))
            tag = "RESET"
        case ShowCommand():
            rows = _show(runner, cmd)
            if describe_rows:
                cols = describe(st)
                assert cols is not None
                session.out(row_description(cols, portal.result_formats))
            for row in rows:  # text: its text and binary forms are the same bytes
                session.out(m.data_row([v.encode() for v in row]))
            tag = "SHOW"
        case TransactionCommand():
            tag = await _transaction(runner, session, cmd)
            if tag == "BEGIN":
                tag = st.tag  # START TRANSACTION answers so
        case UtilityCommand():
            tag = await _utility(runner, session, cmd, st.sql)
        case CommentCommand():
            tag = await object_comments.run(runner, session, cmd, BUILT_IN_EXTENSIONS)
        case DomainDdl():  # CREATE / ALTER / DROP DOMAIN
            tag = await domains.run(runner, session, portal)
        case DatabaseDdl():  # CREATE / DROP DATABASE
            tag = await databases.run(runner, session, cmd)
        case NotifyStatement():  # pending until the block commits (notify_wire.py)
            channel = _identifier(session, cmd.channel)
            if cmd.verb == "NOTIFY":
                runner.notify.notify(channel or "", cmd.payload)
            elif cmd.verb == "LISTEN":
                runner.notify.listen(channel or "")
            else:
                runner.notify.unlisten(channel)
            tag = cmd.verb
        case _:
            raise PgError("0A000", f"unsupported command {st.tag}")
    session.out(m.command_complete(tag))


def _identifier(session: ClientSession, name: str | None) -> str | None:
    """A channel name as PostgreSQL's scanner leaves it: cut to 63 bytes, with a NOTICE."""
    if name is None or len(name.encode()) <= 63:
        return name
    cut = name.encode()[:63].decode("utf-8", "ignore")
    session.send_notice(f'identifier "{name}" will be truncated to "{cut}"', "42622")
    return cut


_SET_CONFIG = re.compile(
    r"^SELECT __HATI_SET_CONFIG\('((?:[^']|'')*)', '((?:[^']|'')*)', (TRUE|FALSE)\)$"
)


async def set_config(runner: StatementRunner, session: ClientSession, sql: str) -> None:
    """`SELECT set_config(name, value, is_local)` of constants (pg_dump and its restores
    empty search_path so): the setting changes as SET [LOCAL] would; the SELECT then
    answers the value."""
    found = _SET_CONFIG.match(sql)
    if found is None:
        return
    name, value = found[1].replace("''", "'"), found[2].replace("''", "'")
    local = found[3] == "TRUE"
    if local and runner.txn_status == "I":
        return  # (outside a block a local setting ends with the statement)
    await _apply(runner, session, [runner.settings.set(name, value, local=local)])


def _show(runner: StatementRunner, cmd: ShowCommand) -> list[tuple[str, ...]]:
    if cmd.name == "all":
        return [(k, v, "") for k, v in runner.settings.show_all()]
    name = cmd.name
    if name in ("transaction isolation level", "transaction_isolation"):
        name = "transaction_isolation"
    return [(runner.settings.get(name),)]


async def _apply(runner: StatementRunner, session: ClientSession, results: list[SetResult]) -> None:
    for result in results:
        if result.duckdb_sql:
            sql = result.duckdb_sql
            try:
                await runner.call(search_path.run_setting, runner.cursor, sql, sql=sql)
            except PgError as exc:
                if sql.startswith("SET TimeZone"):  # PostgreSQL's words; DuckDB's candidates
                    value = runner.settings.values.get("TimeZone", "")
                    raise PgError(
                        "22023",
                        f'invalid value for parameter "TimeZone": "{value}"',
                        detail=exc.detail,
                    ) from None
                if exc.sqlstate in ("42704", "22023", "42000", "XX000") and sql.startswith("SET "):
                    name = sql.split()[1]
                    raise PgError(
                        "42704", f'unrecognized configuration parameter "{name}"'
                    ) from None
                raise
        if result.report:
            session.out(m.parameter_status(*result.report))
        if result.warning:
            session.send_notice(result.warning, "01000", "WARNING")


async def _end_transaction(
    runner: StatementRunner, session: ClientSession, committed: bool = False
) -> None:
    from proxy.pgserver import savepoints, sql_cursors

    runner.txn_status = "I"
    column_hints.transaction_ended(runner)
    savepoints.reset(session.savepoints)
    foreign_keys.end_transaction(runner.cursor)
    await sql_cursors.end_transaction(runner, session.sql_cursors, committed)
    await _apply(runner, session, runner.settings.end_transaction())
    path = runner.settings.values.get("search_path")
    if not committed and path is not None:  # a schema the block created is gone again
        await runner.call(search_path.reapply, runner.cursor, path)


async def _transaction(
    runner: StatementRunner, session: ClientSession, cmd: TransactionCommand
) -> str:
    action = cmd.action
    from proxy.pgserver import savepoints

    if action == "begin":
        if runner.txn_status != "I":
            session.send_notice("there is already a transaction in progress", "25001", "WARNING")
            return "BEGIN"
        savepoints.begin(runner, session.savepoints)  # before DuckDB's BEGIN (the commit clock)
        if runner.implicit:  # BEGIN inside an implicit block makes it explicit
            runner.implicit = False
            runner.txn_status = "T"
        else:
            await runner.call(runner.cursor.begin)
            runner.txn_status = "T"
        # the block starts with default_transaction_read_only; BEGIN's modes come after
        settings = runner.settings
        default = settings.values.get("default_transaction_read_only", "off")
        modes = [settings.set("transaction_read_only", default, local=True)]
        if cmd.options:
            options = cmd.options.replace(",", " ")
            modes.append(settings.set("transaction_characteristics", options, local=True))
        await _apply(runner, session, modes)
        return "BEGIN"
    if action in ("commit", "rollback"):
        if runner.txn_status == "I" and not runner.implicit:
            session.send_notice("there is no transaction in progress", "25P01", "WARNING")
            return "COMMIT" if action == "commit" else "ROLLBACK"
        failed = runner.txn_status == "E"
        runner.implicit = False
        committed = False
        try:
            if action == "commit" and not failed:
                savepoints.before_commit(runner, session.savepoints)
                await runner.call(
                    temp_on_commit.before_commit, runner.cursor, session.temp_on_commit
                )
                await runner.call(foreign_keys.commit, runner.cursor)
                committed = True
            else:
                await runner.call(runner.cursor.rollback)
        finally:
            await _end_transaction(runner, session, committed)
        return "ROLLBACK" if failed or action == "rollback" else "COMMIT"
    return await savepoints.run(runner, session.savepoints, cmd)


async def _utility(
    runner: StatementRunner, session: ClientSession, cmd: UtilityCommand, sql: str = ""
) -> str:
    name = cmd.name
    if name == "discard all":
        if runner.txn_status != "I":
            raise PgError("25001", "DISCARD ALL cannot run inside a transaction block")
        await _apply(runner, session, runner.settings.reset(None))
        session.discard_all()
        runner.notify.unlisten(None)  # DISCARD ALL includes UNLISTEN *, as in PostgreSQL
        session.sequences.discard()
        return "DISCARD ALL"
    if name.startswith("deallocate"):
        target = name.removeprefix("deallocate").strip().removeprefix("prepare").strip()
        if target in ("all", ""):
            session.prepared.clear()
            session.sql_prepared.clear()
        else:
            key = target.strip('"')  # one namespace: PREPARE's and the protocol's Parse's
            found = session.prepared.pop(key, None) is not None
            if session.sql_prepared.pop(key, None) is None and not found:
                raise PgError("26000", f'prepared statement "{key}" does not exist')
        return "DEALLOCATE ALL" if target == "all" else "DEALLOCATE"
    if name.startswith("close"):
        from proxy.pgserver import sql_cursors

        return await sql_cursors.close(
            runner, session.sql_cursors, name.removeprefix("close").strip()
        )
    if name.startswith("discard"):
        if name == "discard sequences":  # this session's currval / lastval
            session.sequences.discard()
        return name.upper()
    if name.startswith("alter ") and " owner to " in name:
        # hatiproxy has one owner of everything (role oid 10): nothing changes hands
        return name.split(" owner to ")[0].upper()
    if name.startswith("privileges "):  # GRANT / REVOKE (transpiler/privileges.py)
        return _privileges(session, name.removeprefix("privileges "))
    if name.startswith("create extension"):
        return _create_extension(name.removeprefix("create extension").strip())
    if name.startswith("drop extension "):
        return _drop_extension(session, name.removeprefix("drop extension "))
    if name.startswith("lock "):
        return await _lock(runner, name.removeprefix("lock ").split(", "))
    if name.startswith("alter storage "):  # transpiler/maintenance.py storage_alter
        kind, _, relation = name.removeprefix("alter storage ").partition(" ")
        if_exists = relation.startswith("if exists ")
        relation = relation.removeprefix("if exists ")
        if await _missing(runner, [relation]) is not None:
            shown = relation.replace('"', "")
            if not if_exists:
                raise PgError("42P01", f'relation "{shown}" does not exist')
            session.send_notice(f'relation "{shown}" does not exist, skipping')
        elif kind == "table":
            if (enable := ri_trigger_switch(sql)) is not None:
                await runner.call(foreign_keys.switch_triggers, runner.cursor, relation, enable)
            if (enable := triggers.all_switch(sql)) is not None:  # TRIGGER ALL / USER
                await runner.call(triggers.switch_all, runner.cursor, relation, enable)
        return f"ALTER {kind.upper()}"
    if cmd.targets:  # VACUUM / ANALYZE of named relations
        return await maintenance.run(runner, session, name, cmd.targets)
    if name.split(" ", 1)[0] in ("reindex", "cluster"):  # transpiler/maintenance.py
        verb, _, relation = name.partition(" ")
        if relation and await _missing(runner, [relation]) is not None:
            raise PgError("42P01", f'relation "{relation.replace(chr(34), "")}" does not exist')
        return verb.upper()
    if name.startswith("set constraints "):
        names, _, mode = name.removeprefix("set constraints ").rpartition(" ")
        if mode not in ("immediate", "deferred") or not names:
            raise PgError("42601", f"syntax error in {name.upper()}")
        if runner.txn_status == "I" and not runner.implicit:
            session.send_notice(
                "SET CONSTRAINTS can only be used in transaction blocks", "25P01", "WARNING"
            )
            return "SET CONSTRAINTS"
        await runner.call(
            foreign_keys.set_mode,
            runner.cursor,
            None if names == "all" else names.split(", "),
            mode == "deferred",
        )
        return "SET CONSTRAINTS"
    raise PgError("0A000", f"{name.upper()} is not supported")


async def _lock(runner: StatementRunner, tables: list[str]) -> str:
    """LOCK TABLE: DuckDB has no table locks; a transaction's reads already see one snapshot
    (what pg_dump's ACCESS SHARE locks are for) and conflicting writes fail at commit. So
    it checks what PostgreSQL checks (a transaction block, the tables exist) and locks
    nothing."""
    if runner.txn_status == "I" and not runner.implicit:
        raise PgError("25P01", "LOCK TABLE can only be used in transaction blocks")
    absent = await _missing(runner, tables)
    if absent is not None:
        raise PgError("42P01", f'relation "{absent}" does not exist')
    return "LOCK TABLE"


async def _missing(runner: StatementRunner, relations: list[str]) -> str | None:
    """The first of `relations` (names as written) that does not exist, or None."""
    sql = "SELECT __hati_catalog.pg.to_regclass(?)"

    def missing() -> str | None:
        catalog_snapshot.refresh(runner.cursor, sql, autocommit=False)  # to_regclass reads it
        for relation in relations:
            if runner.cursor.execute(sql, [relation]).fetchone()[0] is None:
                return relation
        return None

    return await runner.call(missing, sql=sql)


# Extensions whose SQL hatiproxy provides itself (listed in pg_catalog.pg_extension).
BUILT_IN_EXTENSIONS = {
    "plpgsql": "installed in every database",
    "vector": "pgvector's vector type, distance operators and indexes",
    "uuid-ossp": "uuid_generate_v4()",
    "hatiproxy": "the agent functions (memories, state, triggers, branches, semantic SQL)",
    "pgcrypto": "gen_random_uuid(), digest() with md5 / sha1 / sha256",
}


def _drop_extension(session: ClientSession, names: str) -> str:
    """A built-in extension stays installed (a NOTICE says so: its functions and types are
    the server's own); any other does not exist (42704, or a NOTICE with IF EXISTS)."""
    if_exists = names.startswith("if exists ")
    listed = [n for n in names.removeprefix("if exists ").split(", ") if n]
    for name in listed:
        if name in BUILT_IN_EXTENSIONS:
            continue
        if not if_exists:
            raise PgError("42704", f'extension "{name}" does not exist')
        session.send_notice(f'extension "{name}" does not exist, skipping')
    for name in listed:
        if name in BUILT_IN_EXTENSIONS:
            session.send_notice(f'extension "{name}" is built into hatiproxy: it stays installed')
    return "DROP EXTENSION"


def _create_extension(name: str) -> str:
    """Built-in extensions are always there (CREATE EXTENSION, with or without IF NOT
    EXISTS, succeeds); any other cannot be installed."""
    if name in BUILT_IN_EXTENSIONS:
        return "CREATE EXTENSION"
    built_in = "; ".join(f"{n}: {what}" for n, what in BUILT_IN_EXTENSIONS.items())
    raise PgError(
        "0A000",
        f'extension "{name}" is not available',
        hint=f"hatiproxy has these extensions built in: {built_in}.",
    )


_NO_PRIVILEGES = (
    "hatiproxy has no roles or per-object privileges: every login reads and writes every "
    "table, view and sequence within its API key's limits, and an object belongs to the "
    "login that created it."
)


def _privileges(session: ClientSession, action: str) -> str:
    """GRANT / REVOKE / ALTER DEFAULT PRIVILEGES change nothing: PostgreSQL's WARNING for a
    GRANT that grants nothing (01007) or a REVOKE that revokes nothing (01006), with why."""
    revoke = action.endswith("revoke")
    if action.startswith("default"):
        text, tag = "default privileges were not changed", "ALTER DEFAULT PRIVILEGES"
    elif revoke:
        text, tag = "no privileges could be revoked", "REVOKE"
    else:
        text, tag = "no privileges were granted", "GRANT"
    fields = {"S": "WARNING", "V": "WARNING", "C": "01006" if revoke else "01007", "M": text}
    session.out(m.notice_response({**fields, "D": _NO_PRIVILEGES}))
    return tag
