"""SQL over the wire for the agent layer: agent table functions and agent relations.

The transpiler lifts each agent call out of FROM (`transpiler/agent_calls.py`) and
leaves a relation name in its place. Before DuckDB runs the statement, `prepare`
runs the calls through the registry as the connection's identity and registers the
rows on the session's own DuckDB cursor under those names, typed as the function
declares (JSON / UUID / TIMESTAMPTZ columns keep their types), so the results
compose with the rest of SQL. `describe` registers empty relations of the same
shape, so a statement can be described without running anything.

Agent relations (`_hatidata_agent_memory`, ...; proxy/core/relations.py): the
transpiler reports which ones a statement names; `relation_rows` reads the caller's
rows of each from the agent database and `register` puts them on the session's cursor
under that name for the statement (a TEMP view, which hides any table of that name).
Nothing a client can name holds agent data, so nothing needs guarding by text: the
agent database is never attached to the one client SQL runs on (proxy/db/agent_db.py).

Identity: decided at login by proxy/access/agent_rule.py (`hatidata_agent_id` from the
startup options or packet, else the user's name for a password login, else the server's
default agent); fixed for the connection's life.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.access import sql_policy
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import AgentFunction
from proxy.core.relations import RELATIONS
from proxy.core.sqltext import quote_literal
from proxy.db.catalog.functions import FunctionDecl
from proxy.db.connection_threads import on_main
from proxy.db.duckdb_errors import map_duckdb_error
from proxy.execution import inline_rows, relation_cache
from proxy.wire.errors import PgError
from transpiler import Statement, TranspileError, transpile

if TYPE_CHECKING:
    import pyarrow as pa

    from proxy.agent.layer import AgentLayer

# A relation to register: its name, its rows (Arrow; None: empty, for Describe) and
# its columns with their DuckDB types.
Relation = tuple[str, Any, Sequence[tuple[str, str]]]


# Parameter OIDs announced for $n used as agent-function arguments.
_PARAM_OIDS = {
    "VARCHAR": 25,
    "JSON": 25,  # clients send JSON as text; a json-typed value (oid 114) is accepted too
    "BIGINT": 20,
    "DOUBLE": 701,
    "BOOLEAN": 16,
    "TIMESTAMPTZ": 1184,
    "UUID": 2950,
    "FLOAT[]": 1021,
}


def catalog_declarations(functions: Iterable[AgentFunction]) -> list[FunctionDecl]:
    """The agent functions as pg_proc lists them (\\df): table functions of their declared
    parameters (defaults as SQL literals) and result columns, with their docs."""
    return [
        FunctionDecl(
            fn.name,
            [(p.name, p.type, None if p.required else _sql_literal(p.default)) for p in fn.params],
            columns=fn.columns,
            description=fn.doc,
        )
        for fn in functions
    ]


def _sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return quote_literal(value if isinstance(value, str) else json.dumps(value))


def param_oids(st: Statement) -> dict[int, int]:
    """OIDs of the client parameters that agent-function arguments use."""
    from proxy.core.registry import REGISTRY

    out: dict[int, int] = {}
    for call in st.agent_calls:
        fn = REGISTRY.get(call.name)
        by_name = {p.name: p for p in fn.params}
        for p, arg in zip(fn.params, call.args, strict=False):
            if arg.param is not None:
                out[arg.param] = _PARAM_OIDS[p.type]
        for name, arg in call.kwargs:
            if arg.param is not None and name in by_name:
                out[arg.param] = _PARAM_OIDS[by_name[name].type]
    return out


def duckdb_params(st: Statement, params: Sequence[Any]) -> list[Any]:
    """The client parameters DuckDB receives once agent-only ones are gone."""
    if st.duckdb_params is None:
        return list(params)
    return [params[n - 1] if n - 1 < len(params) else None for n in st.duckdb_params]


def first_marker_param(st: Statement) -> int:
    n = st.param_count if st.duckdb_params is None else len(st.duckdb_params)
    return n + 1


async def prepare(
    layer: AgentLayer,
    who: Identity,
    st: Statement,
    params: Sequence[Any],
    *,
    read_only: bool = False,
    queries: dict[str, list[dict[str, Any]]] | None = None,
    cells: int = 0,
) -> list[Relation]:
    """Run the statement's agent calls; the relations to register before DuckDB runs.
    queries: the rows of subquery arguments (`query_rows`). cells: up to this many scalar
    rows stay Python cells (`inline_rows.Cells`, for `inline_rows.with_rows`)."""
    out = []
    for call in st.agent_calls:
        fn = _function(call.name)
        if read_only and fn.writes:
            raise PgError(
                "25006", f"{call.name}() writes data and cannot run in a read-only statement"
            )
        args = [_arg_value(a, params, queries) for a in call.args]
        kwargs = {k: _arg_value(a, params, queries) for k, a in call.kwargs}
        try:
            bound = fn.bind(args, kwargs)
            converted = {p.name: convert_arg(fn, p.name, p.type, bound[p.name]) for p in fn.params}
            # Only the call itself runs on the main loop (where the agent layer's asyncio
            # state lives); its rows become Arrow on the caller's thread, so a busy main
            # loop serving every connection's agent calls does not convert them too.
            # A journaled write is acknowledged here, on the connection's own thread.

            rows = fn.run_fast(layer, who, converted)
            if rows is None and fn.any_loop:
                # Why not on the main loop: the hop there and back cost two loop wake-ups
                # and GIL hand-offs a call (and the main loop then handed the model and
                # DuckDB work to worker threads again); here the agent database is read
                # on this thread directly (Engine.run_uncounted).
                rows = await fn.run(layer, who, converted, fast=False)
            elif rows is None:
                rows = await on_main(fn.run(layer, who, converted, fast=False))
        except AgentError as exc:
            raise to_pg_error(exc) from None
        if cells and inline_rows.fits(fn.columns, len(rows), cells):
            table: Any = inline_rows.Cells(
                [[_cell(typ, r.get(name)) for name, typ in fn.columns] for r in rows]
            )
        else:
            table = _arrow(fn, rows)
        out.append((call.relation, table, fn.columns))
    return out


def arg_queries(st: Statement) -> list[str]:
    """The subquery arguments of the statement's agent calls (SQL text), once each."""
    found = [a.query for c in st.agent_calls for a in (*c.args, *(v for _, v in c.kwargs))]
    return list(dict.fromkeys(q for q in found if q is not None))


def query_rows(
    cur: duckdb.DuckDBPyConnection, who: Identity | None, st: Statement, search_path: str | None
) -> dict[str, list[dict[str, Any]]]:
    """On the worker thread, with the statement's cursor: run each subquery argument as
    a statement of its own (transpiled and checked against the caller's limits as any
    statement is); its rows as dicts by column name."""
    out: dict[str, list[dict[str, Any]]] = {}
    for text in arg_queries(st):
        try:
            statements = transpile(text)
        except TranspileError as exc:
            raise PgError(exc.sqlstate, exc.message) from exc
        sub = statements[0] if len(statements) == 1 else None
        if sub is None or sub.kind != "select" or sub.agent_calls or sub.bind_texts:
            raise PgError(
                "0A000",
                "a subquery argument must be a plain SELECT (no agent or semantic functions)",
            )
        sql_policy.check(sub, who, search_path)
        try:
            result = cur.execute(sub.sql)
            names = [d[0] for d in result.description or ()]
            out[text] = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
        except duckdb.Error as exc:
            raise map_duckdb_error(exc, sub.sql) from None
    return out


def empty_relations(st: Statement) -> list[Relation]:
    out: list[Relation] = []
    for c in st.agent_calls:
        fn = _function(c.name)
        out.append((c.relation, _arrow(fn, []), fn.columns))
    return out


async def relation_rows(layer: AgentLayer, who: Identity, names: Sequence[str]) -> list[Relation]:
    """The caller's rows of each agent relation the statement names, from the agent
    database (one worker hop for all of them)."""
    before = getattr(layer, "before_relations", None)
    if before is not None:  # e.g. the memory relation waits for journaled stores
        await before(who, names)
    params = {"org_id": who.org_id, "agent_id": who.agent_id}
    clock = layer.db.changes
    columns = layer.relation_columns
    cache = relation_cache.CACHE
    hits = [cache.cached(clock, (id(clock), who.org_id, who.agent_id, n)) for n in names]
    if all(rows is not None for rows in hits):  # no worker hop for unchanged rows
        return [(n, rows, columns[n]) for n, rows in zip(names, hits, strict=True)]

    def read(cur: duckdb.DuckDBPyConnection) -> list[Relation]:
        out: list[Relation] = []
        for name in names:
            select = RELATIONS.get(name).select
            rows = relation_cache.CACHE.rows(
                clock,
                (id(clock), who.org_id, who.agent_id, name),
                lambda select=select: cur.execute(select, params).to_arrow_table(),
            )
            out.append((name, rows, layer.relation_columns[name]))
        return out

    return await layer.db.read(read)


def empty_agent_relations(layer: AgentLayer | None, names: Sequence[str]) -> list[Relation]:
    """Empty relations of the same shape, to describe a statement without reading rows."""
    if layer is None:
        return []
    return [(name, None, layer.relation_columns[name]) for name in names]


def register(cur: duckdb.DuckDBPyConnection, relations: Sequence[Relation]) -> None:
    """On the worker thread: make each result visible to this cursor's SQL under its name,
    with its declared column types (Arrow keeps neither JSON nor UUID)."""
    for name, table, columns in relations:
        if table is None:
            cols = ", ".join(f'CAST(NULL AS {typ}) AS "{col}"' for col, typ in columns)
            cur.execute(f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT {cols} LIMIT 0')
            continue
        if not name.startswith("_hatidata_"):  # an agent call's result, read once
            if inline_rows.show(cur, name, table, columns):
                continue  # a few rows: literals bind faster than an Arrow scan
            _arrow_view(cur, name, table, columns)
            continue
        fill(cur, name, table, columns)  # an agent relation's rows, often read again
        cur.execute(f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT * FROM "{name}_rows"')


def _arrow_view(
    cur: duckdb.DuckDBPyConnection, name: str, table: Any, columns: Sequence[tuple[str, str]]
) -> None:
    """The rows registered as `<name>_rows`, and the typed view `name` reading them."""
    cols = ", ".join(f'CAST("{col}" AS {typ}) AS "{col}"' for col, typ in columns)
    cur.register(name + "_rows", table)
    cur.execute(f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT {cols} FROM "{name}_rows"')


def replace_rows(
    cur: duckdb.DuckDBPyConnection,
    name: str,
    table: Any,
    columns: Sequence[tuple[str, str]],
    arrow_view: bool = False,
) -> bool:
    """On the worker thread: an agent call's new rows under its view, which has these
    columns already; returns whether the view now reads registered Arrow rows.

    `arrow_view` (the view reads `<name>_rows`): the rows are only registered anew under
    that name, no view is made. Else a few rows become a view over literals
    (inline_rows.py); more rows get the Arrow view, which later calls then keep: a
    registration alone costs less than a view over many rows of literals (a search's 10
    rows of 19 columns: ~0.7x the CPU time), while for 1-3 rows literals cost less or the
    same."""
    if arrow_view:
        cur.register(name + "_rows", table)
        return True
    if inline_rows.show(cur, name, table, columns):  # at most inline_rows.MAX_ROWS
        return False
    _arrow_view(cur, name, table, columns)
    return True


def fill(
    cur: duckdb.DuckDBPyConnection, name: str, table: Any, columns: Sequence[tuple[str, str]]
) -> None:
    """The rows, typed, in the cursor's temp table `<name>_rows` (the view reads it): a
    native table, so queries over it run as over any table (an Arrow scan with casts
    cost a multiple of that on every read)."""
    cols = ", ".join(f'CAST("{col}" AS {typ}) AS "{col}"' for col, typ in columns)
    arrow = f"{name}_arrow"
    cur.register(arrow, table)
    try:
        cur.execute(f'CREATE OR REPLACE TEMP TABLE "{name}_rows" AS SELECT {cols} FROM "{arrow}"')
    finally:
        cur.unregister(arrow)


def unregister(cur: duckdb.DuckDBPyConnection, names: Iterable[str]) -> None:
    """On the worker thread: the relations of an earlier statement are gone."""
    for name in names:
        cur.execute(f'DROP VIEW IF EXISTS temp.main."{name}"')
        with contextlib.suppress(duckdb.Error):
            if name.startswith("_hatidata_"):
                cur.execute(f'DROP TABLE IF EXISTS temp.main."{name}_rows"')
            else:
                cur.unregister(name + "_rows")


def branch_schema(search_path: str) -> str | None:
    """`branch_x` when a session works inside a branch (search_path 'branch_x, main')."""
    if "branch_" not in search_path:
        return None
    first = search_path.split(",")[0].strip().strip('"').strip("'").strip()
    return first if first.startswith("branch_") else None


def branch_copy_on_write(
    layer: AgentLayer, cur: duckdb.DuckDBPyConnection, branch: str, sql: str, who: Identity | None
) -> None:
    """On the worker thread, before a write: the tables it writes become the branch's own."""
    try:
        layer.branches.prepare_write_sync(cur, branch, sql, who)
    except AgentError as exc:
        raise to_pg_error(exc) from None


def to_pg_error(exc: AgentError) -> PgError:
    return PgError(exc.sqlstate, exc.message, hint=exc.hint)


def _function(name: str) -> AgentFunction:
    from proxy.core.registry import REGISTRY

    if name not in REGISTRY:
        raise PgError("42883", f"function {name}() does not exist in this server")
    return REGISTRY.get(name)


def _arg_value(
    arg: Any, params: Sequence[Any], queries: dict[str, list[dict[str, Any]]] | None = None
) -> Any:
    if arg.query is not None:
        if queries is None or arg.query not in queries:
            raise PgError("0A000", "a subquery argument is not available here")
        return queries[arg.query]
    if arg.param is None:
        return arg.value
    if arg.param - 1 >= len(params):
        raise PgError("08P01", f"no value bound for parameter ${arg.param}")
    return params[arg.param - 1]


def convert_arg(fn: AgentFunction, name: str, typ: str, value: Any) -> Any:
    """A SQL argument as the Python value the handler expects (None stays None)."""
    if value is None:
        return None
    try:
        match typ:
            case "VARCHAR":
                return value if isinstance(value, str) else str(value)
            case "BIGINT":
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError
                return int(value)
            case "DOUBLE":
                return float(value)
            case "BOOLEAN":
                if isinstance(value, bool):
                    return value
                text = str(value).strip().lower()
                if text in ("true", "t", "yes", "on", "1"):
                    return True
                if text in ("false", "f", "no", "off", "0"):
                    return False
                raise ValueError
            case "JSON":
                return json.loads(value) if isinstance(value, str | bytes) else value
            case "UUID":
                return str(uuid.UUID(str(value)))
            case "TIMESTAMPTZ":
                if isinstance(value, dt.datetime):
                    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
                parsed = dt.datetime.fromisoformat(str(value))
                return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
            case "FLOAT[]":
                if isinstance(value, str):
                    value = json.loads(value)
                return [float(x) for x in value]
    except (ValueError, TypeError, json.JSONDecodeError):
        pass
    raise PgError(
        "22023" if typ != "JSON" else "22P02",
        f"{fn.name}(): argument {name} must be {_TYPE_WORDS.get(typ, typ)}, got {value!r:.80}",
    )


_TYPE_WORDS = {
    "BIGINT": "an integer",
    "DOUBLE": "a number",
    "BOOLEAN": "true or false",
    "JSON": "valid JSON",
    "UUID": "a UUID",
    "TIMESTAMPTZ": "an ISO 8601 timestamp",
    "FLOAT[]": "an array of numbers",
}


def _arrow_type(typ: str) -> pa.DataType:
    simple = _arrow_types()
    if typ in simple:
        return simple[typ]
    raise ValueError(f"agent result column type {typ} has no Arrow mapping")


@functools.cache
def _arrow_types() -> dict[str, pa.DataType]:
    """Built once: per column of every agent call's result it cost more than the cells."""
    import pyarrow as pa

    return {
        "VARCHAR": pa.string(),
        "JSON": pa.string(),
        "UUID": pa.string(),
        "BIGINT": pa.int64(),
        "INTEGER": pa.int32(),
        "DOUBLE": pa.float64(),
        "FLOAT": pa.float32(),
        "BOOLEAN": pa.bool_(),
        "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP": pa.timestamp("us"),
        "FLOAT[]": pa.list_(pa.float32()),
        "VARCHAR[]": pa.list_(pa.string()),
    }


def _cell(typ: str, value: Any) -> Any:
    if value is None:
        return None
    if typ == "JSON":
        return json.dumps(value, default=str, ensure_ascii=False)
    if typ in ("UUID", "VARCHAR") and not isinstance(value, str):
        return str(value)
    if typ == "TIMESTAMPTZ" and isinstance(value, str):
        parsed = dt.datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return value


_AS_IS = frozenset({"BIGINT", "INTEGER", "DOUBLE", "FLOAT", "BOOLEAN", "TIMESTAMP"})
_AS_IS |= {"FLOAT[]", "VARCHAR[]"}  # cells `_cell` passes through unchanged
_LAYOUTS: dict[int, tuple[AgentFunction, pa.Schema, list[tuple[str, str, pa.DataType]]]] = {}


def _layout(fn: AgentFunction) -> tuple[pa.Schema, list[tuple[str, str, pa.DataType]]]:
    """The Arrow schema of fn's result, built once per function (per call it cost about
    as much as a search's 10 rows of cells)."""
    got = _LAYOUTS.get(id(fn))
    if got is None or got[0] is not fn:
        import pyarrow as pa

        fields = [(name, typ, _arrow_type(typ)) for name, typ in fn.columns]
        got = _LAYOUTS[id(fn)] = (fn, pa.schema([(n, t) for n, _, t in fields]), fields)
    return got[1], got[2]


def _arrow(fn: AgentFunction, rows: list[dict[str, Any]]) -> pa.Table:
    import pyarrow as pa

    schema, fields = _layout(fn)
    columns = {
        name: pa.array(
            [r.get(name) for r in rows]
            if typ in _AS_IS
            else [_cell(typ, r.get(name)) for r in rows],
            type=arrow_type,
        )
        for name, typ, arrow_type in fields
    }
    return pa.table(columns, schema=schema)
