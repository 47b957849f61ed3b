"""The six SQL tools of MCP: query, read_query and the catalog look-ups.

Written once against `Target.sql`, so they behave the same in-process (HTTP) and over
the wire (stdio). The catalog queries read information_schema / duckdb_tables() and
drop the agent layer's internal schema, which no caller can read anyway. They are
declared at the end (`SQL_TOOLS`) in the structure agent tools are built into
(`schema.Tool`: name, scope, description, described `Param`s).
"""

from __future__ import annotations

from typing import Any

from proxy.api.http.schema import Target, Tool
from proxy.core.errors import AgentError
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.registry import Param

HIDDEN_SCHEMAS = frozenset({"information_schema", "pg_catalog", INTERNAL_SCHEMA})


def literal(text: str) -> str:
    """A SQL string literal (standard_conforming_strings: only quotes need doubling)."""
    return "'" + text.replace("'", "''") + "'"


async def _query(target: Target, args: dict[str, Any]) -> list[dict[str, Any]]:
    # "query runs anything the identity may run": without query:write it runs read-only.
    return await target.sql(args["sql"], read_only=not target.may_write_sql())


async def _read_query(target: Target, args: dict[str, Any]) -> list[dict[str, Any]]:
    return await target.sql(args["sql"], read_only=True)


async def _list_schemas(target: Target, args: dict[str, Any]) -> list[str]:
    rows = await target.sql(
        "SELECT DISTINCT schema_name FROM information_schema.schemata ORDER BY 1", read_only=True
    )
    return [r["schema_name"] for r in rows if r["schema_name"] != INTERNAL_SCHEMA]


def _schemas(name: str) -> set[str]:
    # DuckDB's `main` is Postgres' `public` in the catalog views: accept either name.
    return {"main", "public"} if name in ("main", "public") else {name}


async def _list_tables(target: Target, args: dict[str, Any]) -> list[dict[str, Any]]:
    wanted = _schemas(args["schema"]) if args.get("schema") else None
    where = ""
    if wanted:
        where = f"WHERE table_schema IN ({', '.join(literal(s) for s in sorted(wanted))})"
    rows = await target.sql(
        "SELECT DISTINCT table_schema, table_name, table_type FROM information_schema.tables "
        f"{where} ORDER BY table_schema, table_name",
        read_only=True,
    )
    return [r for r in rows if r["table_schema"] not in HIDDEN_SCHEMAS]


async def _describe_table(target: Target, args: dict[str, Any]) -> list[dict[str, Any]]:
    name: str = args["table_name"]
    schema, _, table = name.rpartition(".")
    where = f"table_name = {literal(table.strip(chr(34)))}"
    if schema:
        in_list = ", ".join(literal(s) for s in sorted(_schemas(schema.strip(chr(34)))))
        where += f" AND table_schema IN ({in_list})"
    rows = await target.sql(
        # a USER-DEFINED type by its name: pgvector's vector (a FLOAT[n] column)
        "SELECT table_schema, column_name, CASE WHEN data_type = 'USER-DEFINED' THEN udt_name "
        "ELSE data_type END AS data_type, is_nullable, column_default "
        f"FROM information_schema.columns WHERE {where} "
        "ORDER BY table_schema IN ('public', 'main') DESC, table_schema, ordinal_position",
        read_only=True,
    )
    rows = [r for r in rows if r["table_schema"] not in HIDDEN_SCHEMAS]
    if not rows:
        return await _describe_unlisted(target, name, schema, table)
    first = rows[0]["table_schema"]  # a name found in several schemas: public (main) first
    return [
        {k: r[k] for k in ("column_name", "data_type", "is_nullable", "column_default")}
        | {"table_schema": first}
        for r in rows
        if r["table_schema"] == first
    ]


async def _describe_unlisted(
    target: Target, name: str, schema: str, table: str
) -> list[dict[str, Any]]:
    """Relations the catalog does not list (the _hatidata_* agent relations) but SQL can read."""
    ident = ".".join('"' + p.strip('"').replace('"', '""') + '"' for p in (schema, table) if p)
    try:
        rows = await target.sql(
            f'SELECT column_name, column_type, "null", "default" FROM (DESCRIBE {ident})',
            read_only=True,
        )
    except Exception:  # no such relation (or not describable): one clear answer
        rows = []
    if not rows:
        raise AgentError.not_found(f"table {name} does not exist")
    return [
        {
            "column_name": r["column_name"],
            "data_type": r["column_type"],
            "is_nullable": r["null"],
            "column_default": r["default"],
            "table_schema": schema.strip('"') or "public",
        }
        for r in rows
    ]


async def _usage_stats(target: Target, args: dict[str, Any]) -> list[dict[str, Any]]:
    rows = await target.sql(
        "SELECT database_name, schema_name AS table_schema, table_name, "
        "estimated_size AS estimated_rows, column_count, index_count FROM duckdb_tables() "
        "WHERE NOT internal AND NOT temporary "
        "ORDER BY estimated_size DESC, schema_name, table_name",
        read_only=True,
    )
    out = []
    for r in rows:
        # The Postgres catalog emulation lives in its own __hati_* database: not user data.
        if str(r.pop("database_name")).startswith("__hati") or r["table_schema"] in HIDDEN_SCHEMAS:
            continue
        if r["table_schema"] == "main":
            r["table_schema"] = "public"  # as information_schema and list_tables name it
        out.append(r)
    return out


_SQL = Param(
    "sql",
    "VARCHAR",
    description="SQL to run (Postgres, DuckDB or Snowflake dialect)",
    nonempty=True,
)
SQL_TOOLS: tuple[Tool, ...] = (
    Tool(
        "query",
        "Run SQL and return the rows as a JSON array of objects. "
        "Writes need the query:write scope.",
        "query:read",
        (_SQL,),
        _query,
    ),
    Tool(
        "read_query",
        "Run read-only SQL (SELECT, SHOW, EXPLAIN); anything that would write is refused.",
        "query:read",
        (Param("sql", "VARCHAR", description="A read-only SQL query", nonempty=True),),
        _read_query,
    ),
    Tool("list_schemas", "List the schemas in the database.", "query:read", (), _list_schemas),
    Tool(
        "list_tables",
        "List tables and views, optionally of one schema.",
        "query:read",
        (Param("schema", "VARCHAR", None, "Only this schema (default: all)"),),
        _list_tables,
    ),
    Tool(
        "describe_table",
        "Columns of a table: name, type, nullability.",
        "query:read",
        (Param("table_name", "VARCHAR", description="Table name, optionally schema.table"),),
        _describe_table,
    ),
    Tool(
        "get_usage_stats",
        "Estimated row counts and column counts of all tables.",
        "query:read",
        (),
        _usage_stats,
    ),
)
