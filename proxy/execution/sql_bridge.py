"""SQL over the wire for the agent layer: agent table functions and identity views.

The transpiler lifts each agent call out of FROM (`transpiler/agent_calls.py`) and
leaves a relation name in its place. Before DuckDB runs the statement, `prepare`
runs the calls through the registry as the connection's identity and registers the
rows on the session's own DuckDB cursor under those names, typed as the function
declares (JSON / UUID / TIMESTAMPTZ columns keep their types), so the results
compose with the rest of SQL. `describe` registers empty relations of the same
shape, so a statement can be described without running anything.

Identity: decided at login by proxy/access/agent_rule.py (`hatidata_agent_id` from the
startup options or packet, else the user's name for a password login, else the server's
default agent); fixed for the connection's life. It is mirrored into the DuckDB variables `hatidata_org_id` / `hatidata_agent_id` that
the `main._hatidata_*` views filter on. Wire SQL may not name the internal schema or
set those variables: that is how one agent is kept out of another's rows.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import TokenType

from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.registry import AgentFunction
from proxy.core.sqltext import quote_literal
from proxy.db.catalog.functions import FunctionDecl
from proxy.wire.errors import PgError
from transpiler import Statement

if TYPE_CHECKING:
    import pyarrow as pa

    from proxy.agent.layer import AgentLayer

_GUARDED = re.compile(
    rf"\b{INTERNAL_SCHEMA}\b|\bset\s+(?:global\s+|session\s+)?variable\s+\"?hatidata_"
    r"|\breset\s+variable\s+\"?hatidata_",
    re.IGNORECASE,
)

_LITERALS = frozenset(
    {
        TokenType.STRING,
        TokenType.NATIONAL_STRING,
        TokenType.RAW_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.BIT_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEX_STRING,
        TokenType.UNICODE_STRING,
        TokenType.NUMBER,
    }
)

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


def identity_sql(who: Identity) -> list[str]:
    """Statements that give a session's DuckDB connection its identity variables."""
    return [
        f"SET VARIABLE hatidata_org_id = {quote_literal(who.org_id)}",
        f"SET VARIABLE hatidata_agent_id = {quote_literal(who.agent_id)}",
    ]


def _words(sql: str) -> list[str]:
    """Keywords and names of SQL, lower case, without comments and literals. A command
    token (RESET, SHOW, CALL, ...) keeps the rest of its statement as raw text: read too."""
    out: list[str] = []
    tokens = Postgres().tokenize(sql)
    for i, t in enumerate(tokens):
        if t.token_type in _LITERALS:
            if i and tokens[i - 1].token_type in Postgres.Tokenizer.COMMANDS:
                out += _words(t.text)
            continue
        out.append(t.text.lower())
    return out


def _steps_around(sql: str) -> bool:
    """Whether SQL names the internal schema or sets / resets a hatidata_* variable, as
    DuckDB will read it: through comments (`SET/**/VARIABLE`) and quoted names."""
    if _GUARDED.search(sql):
        return True
    try:
        words = _words(sql)
    except Exception:
        return True  # unreadable here: refuse rather than guess
    if INTERNAL_SCHEMA in words:
        return True
    for i, word in enumerate(words):
        if word in ("set", "reset"):
            rest = [w for w in words[i + 1 : i + 4] if w not in ("global", "session", "local")]
            if rest[:1] == ["variable"] and rest[1:2] and rest[1].startswith("hatidata_"):
                return True
    return False


def check_guarded(sql: str) -> None:
    """Refuse wire SQL that would step around the identity views."""
    if "hatidata" in sql.lower() and _steps_around(sql):
        raise PgError(
            "42501",
            f"permission denied: the schema {INTERNAL_SCHEMA} and the hatidata_* identity "
            "variables are managed by hatiproxy",
            hint="read agent data through the main._hatidata_* views or the agent functions, "
            "e.g. SELECT * FROM search_memory('...')",
        )


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
) -> list[tuple[str, pa.Table, AgentFunction]]:
    """Run the statement's agent calls; the relations to register before DuckDB runs."""
    out = []
    for call in st.agent_calls:
        fn = _function(call.name)
        if read_only and fn.writes:
            raise PgError(
                "25006", f"{call.name}() writes data and cannot run in a read-only statement"
            )
        args = [_arg_value(a, params) for a in call.args]
        kwargs = {k: _arg_value(a, params) for k, a in call.kwargs}
        try:
            bound = fn.bind(args, kwargs)
            converted = {p.name: convert_arg(fn, p.name, p.type, bound[p.name]) for p in fn.params}
            rows = await fn.run(layer, who, converted)
        except AgentError as exc:
            raise to_pg_error(exc) from None
        out.append((call.relation, _arrow(fn, rows), fn))
    return out


def empty_relations(st: Statement) -> list[tuple[str, pa.Table, AgentFunction]]:
    return [(c.relation, _arrow(_function(c.name), []), _function(c.name)) for c in st.agent_calls]


def register(cur: duckdb.DuckDBPyConnection, relations: list[tuple[str, Any, Any]]) -> None:
    """On the worker thread: make each result visible to this cursor's SQL under its name."""
    for name, table, fn in relations:
        casts = [
            f'CAST("{col}" AS {typ}) AS "{col}"' if typ in ("JSON", "UUID") else f'"{col}"'
            for col, typ in fn.columns
        ]
        cur.register(name + "_rows", table)
        cur.execute(
            f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {', '.join(casts)} FROM {name}_rows"
        )


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


def _arg_value(arg: Any, params: Sequence[Any]) -> Any:
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
    import pyarrow as pa

    simple = {
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
    if typ in simple:
        return simple[typ]
    raise ValueError(f"agent result column type {typ} has no Arrow mapping")


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


def _arrow(fn: AgentFunction, rows: list[dict[str, Any]]) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([(name, _arrow_type(typ)) for name, typ in fn.columns])
    columns = {
        name: pa.array([_cell(typ, r.get(name)) for r in rows], type=schema.field(name).type)
        for name, typ in fn.columns
    }
    return pa.table(columns, schema=schema)
