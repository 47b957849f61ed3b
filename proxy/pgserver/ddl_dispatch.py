"""DDL the server carries out itself, or checks before DuckDB runs it, as PostgreSQL would:
CREATE TABLE LIKE, materialized views, DROP / TRUNCATE against foreign keys, ALTER
COLUMN TYPE rebuilds, constraint DDL, ALTERs around a table's indexes, ALTER INDEX RENAME,
enum ALTER / DROP TYPE, generated index names, CREATE TABLE AS lengths, identity columns.
Each module named here says why; this one only routes."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from proxy.pgserver import (
    alter_indexed,
    alter_rebuild,
    commands,
    constraint_ddl,
    constraint_names,
    ctas_lengths,
    domain_columns,
    drop_column,
    enum_alter,
    fk_checks,
    identity_ddl,
    index_names,
    index_rename,
    matviews,
    search_path,
    sequence_rename,
    set_schema,
    skip_notices,
    table_like,
    temp_on_commit,
    triggers,
    view_deps,
    view_rename,
    view_types,
)
from proxy.wire import messages as m
from transpiler.varchar_length import without_word_checks

_RENAME_TO = re.compile(r"\bRENAME\s+TO\b", re.IGNORECASE)

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


async def run(
    runner: StatementRunner, session: ClientSession, portal: Portal, max_rows: int, describe: bool
) -> bool:
    """Carry out the portal's statement if it is such DDL (True); else False, maybe with
    the statement replaced by the form DuckDB should run (`portal.statement`)."""
    st = portal.statement
    assert st is not None
    if st.sql.startswith("SELECT __HATI_SET_CONFIG(") and not portal.executed:
        await commands.set_config(runner, session, st.sql)  # set_config('search_path', ...)
    if st.tag == "CREATE TABLE" and runner.engine.lake and not portal.executed:
        # a DuckLake keeps no CHECK: char(n) / varchar columns are text there
        st = portal.statement = dataclasses.replace(st, sql=without_word_checks(st.sql))
    if st.tag == "CREATE TABLE" and not portal.executed:  # columns of a domain type
        await domain_columns.rewrite_create_table(runner, portal)
        st = portal.statement
        assert st is not None
    adds = st.tag == "ALTER TABLE" and " ADD COLUMN " in st.sql and not portal.executed
    if adds and await domain_columns.add_column(runner, session, portal):
        return True  # a column of a domain type: its CHECK, the domain's DEFAULT
    if st.table_like is not None:  # CREATE TABLE t (LIKE src ...)
        await table_like.run(runner, session, portal)
        await temp_on_commit.after_server_ddl(runner, session, st)
        return True
    if st.trigger is not None:  # CREATE / DROP TRIGGER, ALTER TABLE ... ENABLE TRIGGER
        await triggers.run(runner, session, portal)
        return True
    if st.tag == "DROP FUNCTION" and not portal.executed:  # a trigger's function: 2BP01
        await triggers.check_drop_function(runner, session, st.sql)
    if st.matview is not None:  # CREATE / REFRESH / DROP / ALTER MATERIALIZED VIEW
        await matviews.run(runner, session, portal)
        return True
    if st.tag in ("DROP TABLE", "DROP VIEW") and not portal.executed:
        await runner.take_cursor()  # not on a materialized view (42809, as PostgreSQL)
        await runner.call(matviews.check_drop, runner.cursor, st, sql=st.sql)
        if st.tag == "DROP TABLE":  # nor on a table a foreign key references
            for text in await runner.call(fk_checks.check_drop, runner.cursor, st, sql=st.sql):
                session.send_notice(text)
    if st.tag == "TRUNCATE TABLE" and not portal.executed:  # foreign keys: see there
        await runner.take_cursor()
        st, notices = await runner.call(fk_checks.check_truncate, runner.cursor, st, sql=st.sql)
        portal.statement = st
        for text in notices:
            session.send_notice(text)
    if st.tag == "ALTER TABLE" and not portal.executed:  # a column a view uses: refused
        await runner.take_cursor()
        for text, detail in await runner.call(
            view_deps.check_alter, runner.cursor, st.sql, sql=st.sql
        ):  # DROP COLUMN ... CASCADE: the views it dropped (and the keys it will)
            fields = {"S": "NOTICE", "V": "NOTICE", "C": "00000", "M": text}
            session.out(m.notice_response({**fields, **({"D": detail} if detail else {})}))
    if st.alter_types is not None and await alter_rebuild.run(runner, session, portal):
        return True  # ALTER COLUMN TYPE that DuckDB cannot do in place: a table rebuild
    if st.identity_alter is not None:  # ALTER COLUMN ... ADD / SET GENERATED, RESTART, ...
        await identity_ddl.run(runner, session, portal)
        return True
    if st.constraints is not None:  # ADD / DROP CONSTRAINT, a CREATE TABLE's FOREIGN KEYs
        await constraint_ddl.run(runner, session, portal)
        if st.identity is not None:  # a CREATE TABLE's identity columns, once it ran
            await runner.call(identity_ddl.record, runner.cursor, st.identity)
            runner.param_types.invalidate()
        await temp_on_commit.after_server_ddl(runner, session, st)
        return True
    if st.tag in ("ALTER VIEW", "ALTER TABLE") and await view_rename.run(runner, session, portal):
        return True  # a view's RENAME [COLUMN]: the views over it follow
    if st.tag in set_schema.TAGS and await set_schema.run(runner, session, portal):
        return True  # SET SCHEMA, which DuckDB lacks
    if st.tag in ("ALTER SEQUENCE", "ALTER TABLE") and await sequence_rename.run(
        runner, session, portal
    ):
        return True  # a sequence's RENAME TO, which DuckDB lacks (ALTER TABLE names one too)
    if st.tag == "ALTER TABLE" and await constraint_names.run(runner, session, portal):
        return True  # RENAME CONSTRAINT, which DuckDB lacks
    if st.tag == "ALTER TABLE" and not portal.executed and _RENAME_TO.search(st.sql):
        await runner.take_cursor()  # DuckDB's constraints keep the names they are shown by
        await runner.call(constraint_names.keep_names, runner.cursor, st.sql)
    if st.tag == "ALTER TABLE" and await drop_column.run(runner, session, portal):
        return True  # DROP COLUMN of a keyed / indexed table: a rebuild without it
    if st.tag == "ALTER TABLE" and await alter_indexed.run(runner, session, portal):
        return True  # RENAME / DROP COLUMN / NOT NULL on an indexed table: around its indexes
    if st.tag == "ALTER INDEX" and await constraint_names.run_index(runner, session, portal):
        return True  # RENAME TO of a constraint's index: the constraint's rename
    if st.tag == "ALTER INDEX" and await index_rename.run(runner, session, portal):
        return True  # RENAME TO, which DuckDB lacks
    if st.tag == "ALTER TYPE" and await enum_alter.run(runner, session, portal):
        return True  # an enum's ADD VALUE / RENAME VALUE / RENAME TO, which DuckDB lacks
    if st.tag == "DROP TYPE" and await enum_alter.drop(runner, session, portal):
        return True  # an enum columns use: refused, or they go first (CASCADE)
    if st.index_name is not None and not portal.executed:
        # CREATE INDEX ON t (...): PostgreSQL numbers the generated name when taken
        st = portal.statement = await index_names.choose(runner, st)
    if skip_notices.may_skip(st) and not portal.executed:  # IF [NOT] EXISTS: see there
        await runner.take_cursor()
        path = runner.settings.values.get("search_path")
        skipped, nothing = await runner.call(skip_notices.notices, runner.cursor, st, path)
        for text, code in skipped:
            session.send_notice(text, code)
        if skipped and st.tag == "SELECT":  # CREATE TABLE IF NOT EXISTS ... AS: no rows
            st = portal.statement = dataclasses.replace(st, tag="CREATE TABLE AS")
        if nothing:  # every object it names is skipped: nothing to run
            session.out(m.command_complete(st.tag))
            return True
    if st.notices and not portal.executed:
        for text in st.notices:  # e.g. an index kind DuckDB lacks was not created
            session.send_notice(text)
    if st.tag == "ALTER TABLE" and st.view_sql is not None and not portal.executed:
        await runner.take_cursor()  # RENAME TO: a materialized view keeps its query
        renamed = await runner.call(matviews.renamed_by_alter_table, runner.cursor, st)
        await runner.execute_duckdb(portal, session, max_rows, describe)
        if renamed is not None:
            await runner.call(matviews.follow_rename, runner.cursor, renamed)
        return True
    if st.tag == "DROP SCHEMA":
        await runner.execute_duckdb(portal, session, max_rows, describe)
        await runner.call(matviews.forget_dropped, runner.cursor)
        path = runner.settings.values.get("search_path")
        await runner.call(search_path.reapply, runner.cursor, path)
        return True
    if st.tag == "CREATE SCHEMA" and not portal.executed:  # it may be on the path now
        await runner.execute_duckdb(portal, session, max_rows, describe)
        path = runner.settings.values.get("search_path")
        await runner.call(search_path.reapply, runner.cursor, path)
        return True
    if st.tag == "CREATE VIEW" and st.created_as is not None and st.column_origins:
        work = lambda: runner.execute_duckdb(portal, session, max_rows, describe)  # noqa: E731
        await view_types.run(runner, portal, work)
        return True
    if st.created_as is not None and st.column_origins:  # CREATE TABLE ... AS
        work = lambda: runner.execute_duckdb(portal, session, max_rows, describe)  # noqa: E731
        await ctas_lengths.run(runner, portal, work)
        return True
    return False
