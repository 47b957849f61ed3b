"""A statement that is exactly one agent call, answered from the call's own rows without
a DuckDB statement (issues 23, 24).

`SELECT * FROM store_memory($1)`, `SELECT id FROM append_event(...) AS e`: the call has
run already (statement_start.plan) and its rows (up to call_rule.MAX_ROWS, scalar
types) are Python cells (`inline_rows.Cells`); DuckDB's only job would be to read them
back through a CTE over parameters, ~1.1-1.7 ms of a ~2 ms call over the wire
(bench/agent_calls.py). One rule
for every agent function, decided from the transpiled statement's parse (call_rule.py):
a single FROM item that is the agent call (an alias, no column aliases), a select list
of `*`, `alias.*` and plain column references (aliased or not), nothing else: no WHERE,
GROUP BY, ORDER BY, LIMIT, DISTINCT, JOIN, CTE, window, set operation.

Exactness: the result's columns (names, types, origins) are the ones DuckDB gave for the
same statement text and function the first time it ran (`learn`): that run goes through
DuckDB as before, and its rows are checked against the rows this module would have
given (the same text encoding), or the statement never takes the shortcut. The cells are
converted as DuckDB's CAST of the bound parameter would convert them (`_CONVERT`); a
value whose conversion is not certain (a naive TIMESTAMPTZ, an out-of-range integer,
JSON text DuckDB might reject) sends that call through DuckDB instead.

Everything else of the statement's path is unchanged: the plan (the call, its
journaled write and fsync wait, the savepoint record) is made as today; only the
DuckDB statement that would turn the rows into the result is skipped. That statement
reads nothing but its parameters, so inside a block, a savepoint or an implicit block
it changes nothing of DuckDB's transaction; a failed block refuses the statement before
it plans (Runner._execute), as today.
"""

from __future__ import annotations

import json
import logging
import math
import struct
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from proxy.pgserver import call_rule
from proxy.pgserver.results import encoders_for
from proxy.pgserver.statement_clock import statement_timed_out
from proxy.wire.types import encode_data_rows

if TYPE_CHECKING:
    from proxy.db.settings import SessionSettings
    from proxy.pgserver import statement_start
    from proxy.pgserver.portal import Portal

log = logging.getLogger("hatiproxy.runner")


class Runs(Protocol):
    """What `run` uses of the connection's Runner (runner.py)."""

    settings: SessionSettings
    since: float | None

    async def run_plan(
        self, plan: statement_start.StartPlan, portal: Portal
    ) -> statement_start.Outcome: ...


def _applies(plan: statement_start.StartPlan) -> bool:
    """Whether the plan is one agent call whose rows went into the statement as
    parameters (inline_rows.with_rows) and nothing else does."""
    st = plan.st
    return not (
        st.kind != "select"
        or len(st.agent_calls) != 1
        or st.duckdb_params  # parameters of the statement's own: not just the call
        or st.agent_relations
        or st.bind_texts
        or plan.relations  # rows in Arrow (many, or not scalar): DuckDB reads them
        or plan.setting_vars
        or plan.needs_fts
        or plan.branch is not None
        or plan.implicit_dml
        or plan.fk.enabled
    )


def _rows(shape: call_rule.Shape, width: int, params: list[Any]) -> list[tuple] | None:
    """The result rows from the call's cells (with_rows' parameters, row by row), as
    DuckDB's CAST of each parameter gives them; None when one is not certain."""
    if width == 0 or len(params) % width:
        return None
    out: list[tuple] = []
    for start in range(0, len(params), width):
        row = []
        for pick, typ in zip(shape.picks, shape.types, strict=True):
            value = params[start + pick]
            if value is not None:
                value = _CONVERT[typ](value)
                if value is _UNSURE:
                    return None
            row.append(value)
        out.append(tuple(row))
    return out


_UNSURE = object()


def _str(value: Any) -> Any:
    return value if type(value) is str else _UNSURE


def _json(value: Any) -> Any:
    if type(value) is not str:
        return _UNSURE
    if "NaN" in value or "Infinity" in value:  # json.dumps may write them; DuckDB refuses
        try:
            json.loads(value, parse_constant=_refuse)
        except ValueError:
            return _UNSURE
    return value


def _refuse(name: str) -> Any:
    raise ValueError(name)


def _uuid(value: Any) -> Any:
    if type(value) is not str or len(value) != 36:
        return _UNSURE  # DuckDB's other spellings ({...}, no dashes) are its business
    try:
        return uuid.UUID(value)
    except ValueError:
        return _UNSURE


def _int(bits: int) -> Callable[[Any], Any]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def convert(value: Any) -> Any:
        return value if type(value) is int and low <= value <= high else _UNSURE

    return convert


def _double(value: Any) -> Any:
    if type(value) is float:
        return value
    return float(value) if type(value) is int and abs(value) < 2**53 else _UNSURE


def _float(value: Any) -> Any:
    value = _double(value)
    if value is _UNSURE or not math.isfinite(value):
        return _UNSURE
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return _UNSURE


def _bool(value: Any) -> Any:
    return value if type(value) is bool else _UNSURE


def _timestamptz(value: Any) -> Any:
    # naive: DuckDB would read it in the session's TimeZone
    return value if _is_datetime(value) and value.tzinfo is not None else _UNSURE


def _timestamp(value: Any) -> Any:
    return value if _is_datetime(value) and value.tzinfo is None else _UNSURE


def _is_datetime(value: Any) -> bool:
    import datetime as dt

    return type(value) is dt.datetime


_CONVERT: dict[str, Callable[[Any], Any]] = {
    "VARCHAR": _str,
    "JSON": _json,
    "UUID": _uuid,
    "BIGINT": _int(64),
    "INTEGER": _int(32),
    "DOUBLE": _double,
    "FLOAT": _float,
    "BOOLEAN": _bool,
    "TIMESTAMPTZ": _timestamptz,
    "TIMESTAMP": _timestamp,
}
CONVERTED = frozenset(_CONVERT)  # the declared types a call's cells convert from
assert CONVERTED == call_rule.TYPES


async def run(
    runner: Runs, plan: statement_start.StartPlan, portal: Portal
) -> statement_start.Outcome:
    """The plan's outcome: from the call's rows when the statement is exactly the call
    and DuckDB has described it before, else DuckDB's (`runner.run_plan`)."""
    shape = rows = None
    name = ""
    if _applies(plan):
        from proxy.core.registry import REGISTRY

        fn = REGISTRY.get(plan.st.agent_calls[0].name)
        name = fn.name
        if all(typ in _CONVERT for _, typ in fn.columns):
            shape = call_rule.shape(plan.st, fn.columns)
            if shape is not None and not shape.off:
                rows = _rows(shape, len(fn.columns), plan.params)
    if shape is not None and shape.cols is not None and rows is not None and not shape.off:
        timeout_ms = runner.settings.statement_timeout_ms
        since = runner.since
        if timeout_ms and since is not None and since + timeout_ms / 1000 <= time.monotonic():
            raise statement_timed_out()  # as Runner.call would have
        log.debug("%s() answered from its rows", name)
        return shape.cols, None, rows
    outcome = await runner.run_plan(plan, portal)
    if shape is not None and shape.cols is None and rows is not None and not shape.off:
        learn(shape, outcome, rows, runner.settings.values.get("TimeZone"))
    return outcome


def learn(
    shape: call_rule.Shape, outcome: statement_start.Outcome, rows: list[tuple], tz: str | None
) -> None:
    """DuckDB's first answer to the statement: its columns, if its rows are ours."""
    cols, count, head = outcome
    if cols is None or count is not None or head is None or len(cols) != len(shape.picks):
        shape.off = True
        return
    described = zip(cols, shape.types, strict=True)
    if any(c.duckdb_type.upper() not in _DESCRIBED.get(t, ()) for c, t in described):
        shape.off = True
        return
    encoders = encoders_for(cols, (0,), tz)
    if encode_data_rows(list(head), encoders) != encode_data_rows(rows, encoders):
        log.warning("agent call shortcut: DuckDB's rows differ from the call's; not used")
        shape.off = True
        return
    shape.cols = cols


# The names DuckDB describes a declared type by.
_DESCRIBED = {
    "VARCHAR": ("VARCHAR",),
    "JSON": ("JSON",),
    "UUID": ("UUID",),
    "BIGINT": ("BIGINT",),
    "INTEGER": ("INTEGER",),
    "DOUBLE": ("DOUBLE",),
    "FLOAT": ("FLOAT",),
    "BOOLEAN": ("BOOLEAN",),
    "TIMESTAMPTZ": ("TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"),
    "TIMESTAMP": ("TIMESTAMP",),
}
