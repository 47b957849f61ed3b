"""Describe of a statement DuckDB runs: its result columns, without running it
(DESCRIBE of the query; DML's RETURNING columns from results.describe_returning)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from proxy.execution import sql_bridge
from proxy.pgserver import agent_relations
from proxy.pgserver.params import placeholder_value
from proxy.pgserver.result_shape import DML_KINDS, postgres_names
from proxy.pgserver.results import Column, describe_returning
from proxy.wire.errors import PgError

if TYPE_CHECKING:
    from proxy.pgserver.contexts import StatementRunner
    from transpiler import Statement


async def describe(
    runner: StatementRunner,
    shown: agent_relations.ShownRelations,
    st: Statement,
    param_oids: Sequence[int],
) -> tuple[Column, ...] | None:
    """The columns `st` returns, typed as Execute will send them (the cursor is free)."""
    # Typed stand-ins, not NULLs: DuckDB types `SELECT $1` by the bound value, and the
    # described types must be the ones Execute later sends.
    nulls = [placeholder_value(o) for o in param_oids][: st.param_count]
    nulls += [None] * (st.param_count - len(nulls))
    nulls = sql_bridge.duckdb_params(st, nulls) + [None] * len(st.bind_texts)
    sql = st.bind_sql(sql_bridge.first_marker_param(st))
    relations = agent_relations.empty_for(runner.agent, st)
    cur = runner.cursor

    def run() -> tuple[Column, ...] | None:
        if shown.needed(relations):
            shown.show(relations, runner.settled())
        if st.kind in DML_KINDS:
            cols = describe_returning(cur, sql)
        else:
            cur.execute("DESCRIBE " + sql, nulls)
            cols = tuple(Column(r[0], r[1]) for r in cur.fetchall())
        # the cursor is free again: the table oids / attnums Execute will send too
        pairs = runner.origins.prepare(cur, st, runner.settings.values.get("search_path"))
        return runner.origins.apply(st, cols, pairs)

    try:
        return postgres_names(st, await runner.call(run, sql=sql))
    except PgError:
        if st.kind in ("other", "explain", "show"):
            return None  # statements DESCRIBE cannot wrap: describe them at execution
        raise
