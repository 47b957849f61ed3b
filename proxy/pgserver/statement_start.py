"""One statement's run on DuckDB, in the steps the Runner's `_start` takes (runner.py).

`plan` decides, before the statement runs, its SQL and parameters, the agent relations
it reads, whether it writes and how its transaction goes (a `StartPlan`); `execute`
runs it on the session's cursor on the worker thread and reads the first rows of its
result in the same hop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from proxy.db.catalog import snapshot as catalog_snapshot
from proxy.db.commit_clock import statement_may_write
from proxy.execution import inline_rows, sql_bridge
from proxy.pgserver import (
    agent_relations,
    arrow_results,
    call_rule,
    ddl_statements,
    domain_casts,
    enum_columns,
    explain,
    fk_checks,
    parsed_sql,
    sequence_values,
    temp_on_commit,
)
from proxy.pgserver.result_shape import (
    DML_KINDS,
    LOSSLESS_SQL,
    ROW_KINDS,
    lossless_sql,
    needs_cast,
    postgres_names,
    returns_rows,
)
from proxy.pgserver.results import Column, columns_of
from proxy.pgserver.sequence_select import execute_reading_sequences
from proxy.pgserver.statement_clock import remaining_ms
from proxy.wire.errors import PgError
from transpiler import sequence_draws, upsert_keys

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.layer import AgentLayer
    from proxy.core.identity import Identity
    from proxy.db.settings import SessionSettings
    from proxy.pgserver.contexts import ClientSession
    from proxy.pgserver.portal import Portal
    from proxy.pgserver.setting_mirror import SettingMirror
    from proxy.semantic.engine import SemanticEngine
    from transpiler import Statement

# Rows fetched together with the statement's execution (one worker hop for short results);
# small enough that encoding them on the event loop costs next to nothing.
PREFETCH_ROWS = 64
# DuckDB SQL reading session settings: the session mirrors them as variables first.
_READS_SETTINGS = (
    "GETVARIABLE('pg:",
    "pg_settings",
    "__HATI_CURRENT_SETTING",
    "FORMAT_TYPE(",
    "format_type(",
)

# What a run gives back: the result's columns (None: no rows), the affected row count
# (DML without RETURNING), and the first rows fetched.
Outcome = tuple[tuple[Column, ...] | None, int | None, list[tuple] | None]


@dataclass
class StartPlan:
    """One statement, as decided before it runs on DuckDB."""

    st: Statement
    sql: str  # with the vector markers bound
    params: list[Any]
    relations: list[sql_bridge.Relation]  # agent relations and agent calls' results it reads
    shown: tuple[explain.Bound, ...]  # EXPLAIN: the bound vectors, shown by their text
    has_rows: bool  # returns rows (a query, RETURNING)
    implicit_dml: bool  # extended-protocol DML outside a block: a block of its own until Sync
    needs_fts: bool
    branch: str | None  # the branch schema a write outside a query works in
    setting_vars: list[str]  # statements that mirror settings as DuckDB variables first
    writes: bool  # may write: counted on the commit clock, recorded for savepoints
    own_transaction: bool  # several DuckDB statements outside a block: run as one
    outside_block: bool  # no block of the client's, nor an implicit one, was open
    fk: fk_checks.WriteCheck
    ran: list[str]  # [the SQL that ran] (ALTER TABLE on a view runs ALTER VIEW)
    arrow: list[arrow_results.ArrowResult | None] = field(default_factory=list)
    # The session's currval / lastval values (sequence_values.py); None: not kept
    seqs: sequence_values.SessionSequences | None = None
    # The session's temporary tables with an ON COMMIT action (temp_on_commit.py)
    temps: temp_on_commit.TempOnCommit | None = None
    database: str = ""  # the session's database (proxy/db/databases.py)
    # a result column reads a char(n) one: read with fetchmany, its per-value encoder pads
    padded: bool = False


class Planner(Protocol):
    """What `plan` reads of the connection's Runner (runner.py)."""

    cursor: duckdb.DuckDBPyConnection
    settings: SessionSettings
    txn_status: str
    implicit: bool
    semantic: SemanticEngine
    agent: AgentLayer | None
    who: Identity | None
    mirror: SettingMirror
    since: float | None  # when the statement arrived (statement_clock.py)
    engine: Any  # its database's (proxy/db/engine.py)

    async def call(self, fn: Callable[..., Any], *args: Any, sql: str | None = None) -> Any: ...


@dataclass(frozen=True, slots=True)
class _Facts:
    """What `plan` derives from the statement alone (not from the session or the call)."""

    sql: str  # with the vector markers bound
    first_vector: int
    needs_fts: bool
    reads_settings: bool  # mirrors settings as DuckDB variables first
    writes: bool
    has_rows: bool
    dml: bool


# Statement -> its facts, by id (a Statement's hash covers every field); the entry keeps
# the statement, so an id is never reused while cached. Bounded like the transpile cache
# the statements come from; a repeated (prepared) statement then pays one dict lookup.
_FACTS: dict[int, tuple[Statement, _Facts]] = {}
_MAX_FACTS = 4096


def _facts(st: Statement) -> _Facts:
    entry = _FACTS.get(id(st))
    if entry is not None and entry[0] is st:
        return entry[1]
    first_vector = sql_bridge.first_marker_param(st)
    sql = st.bind_sql(first_vector)
    needs_fts = "fts_main_" in sql
    facts = _Facts(
        sql=sql,
        first_vector=first_vector,
        needs_fts=needs_fts,
        # pg_settings (and current_setting of a column) show the session's values too;
        # format_type reads search_path (a domain off the path is schema-qualified)
        reads_settings=any(w in sql for w in _READS_SETTINGS),
        # May it write? Then it counts on the commit clock when it commits on its
        # own, and an explicit block records it for ROLLBACK TO SAVEPOINT.
        writes=statement_may_write(st, sql, needs_fts),
        has_rows=returns_rows(st),
        dml=st.kind in DML_KINDS,
    )
    if len(_FACTS) >= _MAX_FACTS:
        _FACTS.clear()
    _FACTS[id(st)] = (st, facts)
    return facts


async def plan(runner: Planner, portal: Portal, session: ClientSession) -> StartPlan:
    """What the statement reads of the agent layer, its SQL and parameters, and how
    its transaction goes."""
    st = portal.statement
    assert st is not None
    values = runner.settings.values
    facts = _facts(st)
    relations: list[sql_bridge.Relation] = []
    # An agent call's few rows go into the statement itself (no view to make first).
    inline = st.kind == "select" and not st.atomic and inline_rows.can_prefix(facts.sql)
    if st.agent_calls or st.agent_relations:  # nothing of the agent layer otherwise
        queries = None
        if st.agent_calls and runner.who is not None and sql_bridge.arg_queries(st):
            # Subquery arguments (store_memories((SELECT ...))): their rows, on our cursor.
            path = values.get("search_path")
            queries = await runner.call(sql_bridge.query_rows, runner.cursor, runner.who, st, path)
        relations = await agent_relations.for_statement(
            runner.agent,
            runner.who,
            st,
            portal.params,
            queries,
            remaining_ms(runner.since, runner.settings.statement_timeout_ms),
            cells=call_rule.cell_rows(st) if inline else 0,
        )
    if st.upsert is not None and (no := upsert_keys.refusal(st.upsert, portal.params)):
        raise PgError(no.sqlstate, no.message, detail=no.detail, hint=no.hint)
    params = sql_bridge.duckdb_params(st, portal.params)
    shown: tuple[explain.Bound, ...] = ()
    if st.bind_texts:
        vectors = await runner.semantic.vectors(st)
        params += vectors
        if st.kind == "explain":  # the plan shows each vector by its text
            shown = explain.bound_vectors(
                st.bind_texts, vectors, facts.first_vector, st.vector_dims
            )
    sql = facts.sql
    if relations and st.agent_calls and inline:
        calls = {c.relation for c in st.agent_calls}
        sql, params, relations = inline_rows.with_rows(sql, params, relations, calls)
    outside_block = runner.txn_status == "I" and not runner.implicit
    # Extended-protocol DML outside a block runs in a block of its own until Sync; when
    # Sync is already the next message (Bind, Execute, Sync in one packet, as drivers
    # send a statement) the block would hold this statement alone: DuckDB's autocommit
    # runs and commits it in one hop, as a simple Query's, without a BEGIN first and a
    # COMMIT of its own at Sync. RETURNING keeps the block (its rows may be suspended).
    implicit_dml = (
        facts.dml
        and outside_block
        and session.in_extended_block
        and (facts.has_rows or not session.sync_next())
    )
    branch = (
        sql_bridge.branch_schema(values.get("search_path", ""))
        if runner.agent is not None and st.kind not in ROW_KINDS
        else None
    )
    return StartPlan(
        st=st,
        sql=sql,
        params=params,
        relations=relations,
        shown=shown,
        has_rows=facts.has_rows,
        implicit_dml=implicit_dml,
        needs_fts=facts.needs_fts,
        branch=branch,
        setting_vars=runner.mirror.statements(values) if facts.reads_settings else [],
        writes=facts.writes,
        # Several DuckDB statements outside a transaction: one of their own.
        own_transaction=st.atomic and outside_block,
        outside_block=outside_block,
        # Foreign keys the server enforces, checked after the write (fk_checks.py).
        fk=fk_checks.WriteCheck(
            st,
            sql,
            enabled=facts.dml and branch is None,
            autocommit=outside_block and not implicit_dml,
            in_block=runner.txn_status != "I" and not runner.implicit,
        ),
        ran=[sql],
        seqs=session.sequences,
        temps=session.temp_on_commit,
        database=runner.engine.database_name,
    )


def execute(
    plan: StartPlan,
    cur: duckdb.DuckDBPyConnection,
    portal: Portal,
    semantic: SemanticEngine,
    agent: AgentLayer | None,
    who: Identity | None,
    sizes: arrow_results.ResultSizes,
    tz: str | None,
    parsed: parsed_sql.ParsedStatements | None = None,
) -> Outcome:
    """On the worker thread: run the plan's SQL; the first rows in the same hop.
    `parsed`: the connection's kept parses (parsed_sql.py)."""
    st, sql, params = plan.st, plan.sql, plan.params
    if plan.needs_fts:
        semantic.ensure_fts_indexes(cur, sql, plan.database)
    in_txn = not plan.outside_block or plan.implicit_dml
    if plan.temps is not None:  # ON COMMIT actions of transactions ended since the last one
        temp_on_commit.settle(cur, plan.temps, in_txn)
    # pg_class & co. are read from a snapshot of this connection, made current first
    catalog_snapshot.refresh(cur, sql, autocommit=plan.outside_block and not plan.implicit_dml)
    if plan.branch is not None:
        sql_bridge.branch_copy_on_write(agent, cur, plan.branch, sql, who)
    is_select = st.kind == "select"
    cast = LOSSLESS_SQL.get(sql) if is_select else None
    run_sql = domain_casts.rewrite(cur, cast[0] if cast else sql, plan.database)  # 'x'::a_domain
    if plan.seqs is not None and sequence_draws.reads_session_values(run_sql):
        # this session's currval / lastval, as constants (sequence_values.py)
        seqs = plan.seqs
        run_sql = sequence_draws.session_values(
            run_sql, lambda text: seqs.currval(text, cur), seqs.lastval
        )
    if st.atomic or st.view_sql is not None:
        plan.ran[0] = ddl_statements.run_ddl(cur, st, run_sql, plan.own_transaction)
        sequence_values.forget_tables()
    elif st.tag == "ALTER TABLE" and not params:
        ddl_statements.alter_table(cur, run_sql, plan.outside_block)
        sequence_values.forget_tables()
    else:
        keep = parsed if st.kind in parsed_sql.KEPT_KINDS else None

        def execute(text: str) -> None:
            set_rows = execute_reading_sequences(
                cur, text, params, is_select, not plan.outside_block, keep
            )
            if set_rows and plan.seqs is not None:
                sequence_values.note_setval(plan.seqs, set_rows)

        if st.kind == "ddl":
            sequence_values.forget_tables()
        draw = None if plan.seqs is None else sequence_values.plan(cur, run_sql, st)
        if draw is not None:
            assert plan.seqs is not None
            return sequence_values.run(
                draw,
                plan.seqs,
                cur,
                execute,
                lambda whole: _finish(plan, cur, portal, sizes, tz, run_sql, cast, whole),
            )
        execute(run_sql)
    if st.on_commit is not None and plan.temps is not None:
        temp_on_commit.created(cur, plan.temps, st.on_commit, in_txn)
    return _finish(plan, cur, portal, sizes, tz, run_sql, cast, False)


def _finish(
    plan: StartPlan,
    cur: duckdb.DuckDBPyConnection,
    portal: Portal,
    sizes: arrow_results.ResultSizes,
    tz: str | None,
    run_sql: str,
    cast: tuple[str, tuple[Column, ...]] | None,
    whole: bool,
) -> Outcome:
    """The statement's result: its columns and first rows (`whole`: every row)."""
    st, sql = plan.st, plan.sql
    if st.kind == "explain":
        return explain.columns(sql), None, explain.plan_rows(cur, sql, plan.shown)
    if cast:
        return cast[1], None, cur.fetchall() if whole else cur.fetchmany(PREFETCH_ROWS)
    cols, has_enum = _columns(run_sql, cur.description)
    if has_enum:
        enum_columns.learn(cur, [c.duckdb_type for c in cols or ()])
    return _read(plan, cur, portal, cols, run_sql, sizes, tz, whole)


# SQL text -> (DuckDB's description of its last result, its columns, has an ENUM column).
# A repeated statement whose description is unchanged reuses the same columns (the same
# object: column_origins.apply and the RowDescription cache then match at once).
_DESCRIBED: dict[str, tuple[Any, tuple[Column, ...] | None, bool]] = {}


def _columns(sql: str, description: Any) -> tuple[tuple[Column, ...] | None, bool]:
    seen = _DESCRIBED.get(sql)
    if seen is not None and seen[0] == description:
        return seen[1], seen[2]
    cols = columns_of(description)
    has_enum = bool(cols) and any(c.duckdb_type.startswith("ENUM(") for c in cols or ())
    if len(_DESCRIBED) >= _MAX_FACTS:
        _DESCRIBED.clear()
    _DESCRIBED[sql] = (description, cols, has_enum)
    return cols, has_enum


def _read(
    plan: StartPlan,
    cur: duckdb.DuckDBPyConnection,
    portal: Portal,
    cols: tuple[Column, ...] | None,
    run_sql: str,
    sizes: arrow_results.ResultSizes,
    tz: str | None,
    whole: bool = False,
) -> Outcome:
    """The result of the statement that just ran: its first rows, or its row count
    (`whole`: all its rows, read now)."""
    st, params = plan.st, plan.params
    if not plan.has_rows:
        row = cur.fetchone() if cols and cols[0].name == "Count" else None
        return None, (int(row[0]) if row and row[0] is not None else None), None
    if not cols:
        return cols, None, None
    if portal.keep_rows is not None:  # a DML CTE's RETURNING rows, exact (dml_ctes.py)
        portal.kept = cur.to_arrow_table()
        return cols, None, []
    is_select = st.kind == "select"
    cast = is_select and needs_cast(cols)
    if cast:
        wrapped = lossless_sql(plan.sql, cols)
        LOSSLESS_SQL[plan.sql] = (wrapped, cols)
        cur.execute(wrapped, params) if params else cur.execute(wrapped)
    # Fetch the first rows in this same hop: a short result then needs no second trip
    # to a worker thread when Execute sends it. (All of them when foreign keys are
    # checked next: the checks reuse the cursor.)
    if plan.fk.active or whole:
        return cols, None, cur.fetchall()
    if not is_select or cast or plan.padded:
        return cols, None, cur.fetchmany(PREFETCH_ROWS)
    if sizes.short(run_sql):
        # Short last time (see arrow_results.ResultSizes): fetchmany, no Arrow plan needed.
        head = cur.fetchmany(PREFETCH_ROWS)
        sizes.seen(run_sql, len(head))
        return cols, None, head
    plan_cells = arrow_plan(portal, postgres_names(st, cols), tz)
    if plan_cells is None:
        return cols, None, cur.fetchmany(PREFETCH_ROWS)
    head, stream = arrow_results.start(cur, plan_cells)
    sizes.seen(run_sql, None if head is None else len(head))
    plan.arrow.append(stream)
    return cols, None, [] if head is None else head


def arrow_plan(
    portal: Portal, cols: tuple[Column, ...] | None, tz: str | None
) -> list[arrow_results.Plan] | None:
    """How the result's columns are read through Arrow (None: they are not)."""
    formats = portal.result_formats
    if not cols or (len(formats) > 1 and len(formats) != len(cols)):
        return None
    return arrow_results.plans(cols, formats, tz)
