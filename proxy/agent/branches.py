"""Branches: sandbox copies of the data an agent can query and write, then merge or discard.

Layout
------
A branch is a schema `branch_<branch_id>` (branch_id: 32 lower-case hex digits) holding one
view per base table of `main` (`CREATE VIEW branch_x.t AS SELECT * FROM main.t`; tables and
views whose names start with `_hatidata`, and everything in `hatidata_internal`, are never
branched). Its metadata lives in `hatidata_internal.branches`. A branch belongs to the
(org_id, agent_id) that created it; for anyone else it does not exist (not_found).

Queries and copy-on-write
-------------------------
`branch_query(branch_id, sql)` transpiles `sql` (Postgres SQL) and runs its statements in ONE
transaction on a pooled cursor whose search_path is `branch_x,main` (restored afterwards), so
unqualified names resolve to the branch first. Before a statement writes to a table
(INSERT / UPDATE / DELETE / MERGE / ALTER / TRUNCATE / CREATE INDEX / CREATE OR REPLACE on
it) that is still a view in the branch, the view is replaced by a real copy of main's table
(copy-on-write): main's DDL re-targeted to the branch (column types, defaults, PRIMARY KEY,
UNIQUE, NOT NULL, CHECK kept), or, when main's table has FOREIGN KEYs (DuckDB cannot create
them across schemas), `CREATE TABLE AS` plus its PRIMARY KEY only. The copy is a snapshot of
main taken at the first write; tables never written keep showing main's live rows. New tables
created in the branch (unqualified CREATE TABLE) land in the branch schema, because DuckDB
creates in the first schema of the search path. Written tables are recorded in
`tables_copied`. Refused inside a branch: writes to any schema but the branch, DROP of a table
that exists in main (it would fall through to main's table), renaming such a table, TEMP
objects, reads of `hatidata_internal` or another branch, session/transaction statements,
ATTACH/COPY/PRAGMA and other statements whose targets cannot be determined.

The result of `branch_query` is the result of the LAST statement, one output row per result
row, in a single JSON column `row` holding `{column: value}` (values made JSON-safe: DECIMAL
-> float, dates/times -> ISO text, UUID -> text, BLOB -> "\\x<hex>"). A statement without a
result set gives one row `{"command": <tag>, "rows_affected": n}` (`rows_affected` only when
DuckDB reports a count). Results are capped at MAX_ROWS rows (more is an error, nothing is
committed). MCP returns the list of the `row` objects.

Merge: "tables touched by a merge end up exactly as the strategy says"
--------------------------------------------------------------------
The touched tables are the base tables of the branch schema: copies made by copy-on-write and
tables created in the branch. Tables still views (never written) are not touched: main keeps
whatever it has now. Views and other objects created in a branch are not merged. Columns are
matched by name; only columns present in both tables are written (schema changes made in the
branch are not merged); a branch-created table is created in main with the branch's DDL.
Everything happens in ONE transaction (all tables or none), then the branch schema is dropped
and the status becomes `merged`.

- `branch_wins`: for each touched table that exists in main, `DELETE FROM main.t` then
  `INSERT INTO main.t SELECT ... FROM branch.t`: main's table ends up with exactly the branch's
  rows (rows deleted or updated in the branch are deleted / updated in main; rows inserted or
  changed in main after branching are lost). main's table object, constraints and indexes stay.
- `main_wins`: main's existing rows never change and nothing is deleted. For a table with a
  PRIMARY KEY in main, the branch rows whose key is not in main are inserted (rows updated or
  deleted in the branch whose key main still has are ignored; a key main deleted after
  branching comes back if the branch still has it). For a table without a primary key, the
  distinct branch rows not already present in main (`branch EXCEPT main`, NULLs equal) are
  inserted, so a row updated in the branch arrives as an additional row.
- Both: a table created in the branch that main lacks is created in main with all its rows.
  Any constraint violation (e.g. a UNIQUE column in main_wins) fails the whole merge with
  nothing changed; the branch stays active.

Lifecycle: active -> merged | discarded | expired. Only active branches can be queried, merged
or discarded (otherwise: conflict, SQLSTATE 55000). `ttl_seconds` (> 0) sets `expires_at`;
`expire_branches()` expires the caller's overdue branches at once, and a background task
expires everybody's every EXPIRY_INTERVAL_S seconds (and once at start). An overdue branch is
also refused (and expired) when used.

Wire clients: `Branches.prepare_write_sync(cur, schema_name, sql)` does the copy-on-write for a
client that ran `SET search_path = 'branch_x,main'` and writes over the wire; see its docstring.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import decimal
import json
import logging
import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from proxy.agent.base import INTERNAL_SCHEMA, AgentError, Identity, Param, agent_function
from transpiler import TranspileError, transpile

if TYPE_CHECKING:
    from proxy.agent.layer import AgentLayer

log = logging.getLogger("hatiproxy.agent.branches")
T = TypeVar("T")

TABLE = f"{INTERNAL_SCHEMA}.branches"
SCHEMA_PREFIX = "branch_"
STATUSES = ("active", "merged", "discarded", "expired")
STRATEGIES = ("branch_wins", "main_wins")
MAX_ROWS = 10_000
MAX_TTL_SECONDS = 365 * 24 * 3600
EXPIRY_INTERVAL_S = 60.0
_TMP_PREFIX = "__hati_cow_"  # scratch name while a copy is built (see _materialize)
_ID = re.compile(r"^[0-9a-f]{32}$")
_WRITE_WORDS = frozenset(
    {"INSERT", "UPDATE", "DELETE", "MERGE", "ALTER", "TRUNCATE", "CREATE", "DROP", "COPY"}
)
# Statement kinds (transpiler) allowed inside branch_query.
_QUERY_KINDS = frozenset({"select", "insert", "update", "delete", "merge", "ddl", "explain"})

_COLUMNS = (
    ("branch_id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("description", "VARCHAR"),
    ("schema_name", "VARCHAR"),
    ("status", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
    ("expires_at", "TIMESTAMPTZ"),
    ("merged_at", "TIMESTAMPTZ"),
    ("strategy", "VARCHAR"),
    ("tables_copied", "JSON"),
)
_SELECT = ", ".join(name for name, _ in _COLUMNS)


def _q(name: str) -> str:
    """Quote an identifier for DuckDB."""
    return '"' + name.replace('"', '""') + '"'


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _normalise_id(branch_id: Any) -> str:
    """Accept the 32-hex id, its UUID form or the schema name; anything else is not found."""
    if not isinstance(branch_id, str) or not branch_id.strip():
        raise AgentError.invalid("branch_id must be a non-empty string")
    text = branch_id.strip().lower()
    if text.startswith(SCHEMA_PREFIX):
        text = text[len(SCHEMA_PREFIX) :]
    with contextlib.suppress(ValueError):
        text = uuid.UUID(text).hex
    if not _ID.match(text):
        raise AgentError.not_found(f"branch {branch_id!r} does not exist")
    return text


def _jsonable(value: Any) -> Any:
    """A DuckDB value as a JSON-safe Python value."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    return str(value)


def _db_error(exc: Exception, sql: str | None = None) -> AgentError:
    """A DuckDB failure inside a branch as an AgentError with the Postgres SQLSTATE."""
    from proxy.duckdb_errors import map_duckdb_error

    pg = map_duckdb_error(exc, sql)
    code = {"23": "constraint_violation", "40": "conflict", "42": "invalid_sql"}.get(
        pg.sqlstate[:2], "query_failed"
    )
    status = {"40": 409, "23": 409, "57": 408}.get(pg.sqlstate[:2], 422)
    return AgentError(code, pg.message, sqlstate=pg.sqlstate, http_status=status, hint=pg.detail)


def _refused(message: str) -> AgentError:
    return AgentError("not_supported", message, sqlstate="0A000", http_status=422)


# --- catalog helpers (all run on a worker thread with a cursor) -------------------------


def _base_tables(cur: duckdb.DuckDBPyConnection, schema: str) -> dict[str, str]:
    """lower(name) -> name of the base tables of `schema` in the current database."""
    rows = cur.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? "
        "AND database_name = current_database() AND NOT temporary",
        [schema],
    ).fetchall()
    return {name.lower(): name for (name,) in rows}


def _branchable(cur: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """main's base tables a branch mirrors (never the agent layer's own tables)."""
    return {
        low: name
        for low, name in _base_tables(cur, "main").items()
        if not low.startswith("_hatidata")
    }


def _table_sql(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> str | None:
    row = cur.execute(
        "SELECT sql FROM duckdb_tables() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = current_database()",
        [schema, table],
    ).fetchone()
    return row[0] if row else None


def _constraints(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[tuple]:
    return cur.execute(
        "SELECT constraint_type, constraint_column_names FROM duckdb_constraints() "
        "WHERE schema_name = ? AND table_name = ? AND database_name = current_database()",
        [schema, table],
    ).fetchall()


def _primary_key(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    for kind, cols in _constraints(cur, schema, table):
        if kind == "PRIMARY KEY":
            return list(cols)
    return []


def _columns(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    rows = cur.execute(
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = current_database() ORDER BY column_index",
        [schema, table],
    ).fetchall()
    return [name for (name,) in rows]


_IDENT = re.compile(r'"(?:[^"]|"")*"|[^".(\s]+')


def _retarget(ddl: str, schema: str, table: str) -> str | None:
    """DuckDB's `CREATE TABLE [s.]t(...)` text re-targeted to `"schema"."table"`; None if the
    text does not have the expected shape (the caller then falls back to CREATE TABLE AS)."""
    head = "CREATE TABLE "
    if not ddl.startswith(head):
        return None
    pos = len(head)
    while True:  # skip the (possibly qualified, possibly quoted) name
        match = _IDENT.match(ddl, pos)
        if match is None:
            return None
        pos = match.end()
        if ddl.startswith(".", pos):
            pos += 1
            continue
        break
    if not ddl.startswith("(", pos):
        return None
    return f"{head}{_q(schema)}.{_q(table)}{ddl[pos:]}"


def _copy_table(
    cur: duckdb.DuckDBPyConnection, src_schema: str, src: str, dst_schema: str, dst: str
) -> str:
    """Create dst_schema.dst with src's structure and rows; returns what was kept."""
    ddl = _table_sql(cur, src_schema, src) or ""
    constraints = _constraints(cur, src_schema, src)
    has_fk = any(kind == "FOREIGN KEY" for kind, _ in constraints)
    target = f"{_q(dst_schema)}.{_q(dst)}"
    create = None if has_fk else _retarget(ddl, dst_schema, dst)
    if create is not None:
        cur.execute(create)
        kept = "all constraints"
    else:
        # DuckDB cannot create foreign keys across schemas: keep types and the primary key.
        cur.execute(f"CREATE TABLE {target} AS SELECT * FROM {_q(src_schema)}.{_q(src)} LIMIT 0")
        pk = _primary_key(cur, src_schema, src)
        if pk:
            cols = ", ".join(_q(c) for c in pk)
            cur.execute(f"ALTER TABLE {target} ADD PRIMARY KEY ({cols})")
        kept = "primary key only (foreign keys not copied)" if pk else "no constraints"
    cur.execute(f"INSERT INTO {target} SELECT * FROM {_q(src_schema)}.{_q(src)}")
    return kept


# --- which tables a statement writes ------------------------------------------------------


@dataclass
class _Plan:
    """What a statement needs before it runs: tables to copy from main into the branch."""

    copy: list[str] = field(default_factory=list)  # main table names


def _name(table: exp.Table) -> tuple[str | None, str | None, str]:
    return (table.catalog or None, table.db or None, table.name)


def _targets(tree: exp.Expr) -> tuple[list[tuple[exp.Table, bool]], list[exp.Table], bool]:
    """(written, dropped, renames): the objects a statement changes. `written` pairs each
    target with whether its data changes (so a view over main must become a copy first);
    CREATE VIEW / SEQUENCE / MACRO / TYPE only create a new name."""
    written: list[tuple[exp.Table, bool]] = []
    dropped: list[exp.Table] = []
    renames = False

    def table_of(node: exp.Expr | None) -> exp.Table | None:
        if isinstance(node, exp.Schema):
            node = node.this
        return node if isinstance(node, exp.Table) else None

    for node in tree.walk():
        if isinstance(node, exp.Insert | exp.Update | exp.Delete | exp.Merge):
            if (t := table_of(node.this)) is not None:
                written.append((t, True))
        elif isinstance(node, exp.Alter):
            if (t := table_of(node.this)) is not None:
                written.append((t, True))
            renames = renames or any(isinstance(a, exp.AlterRename) for a in node.actions)
        elif isinstance(node, exp.TruncateTable):
            written.extend((t, True) for t in node.expressions if isinstance(t, exp.Table))
        elif isinstance(node, exp.Create):
            kind = (node.args.get("kind") or "").upper()
            if kind == "INDEX" and isinstance(node.this, exp.Index):
                if (t := table_of(node.this.args.get("table"))) is not None:
                    written.append((t, True))
            elif kind in ("TABLE", "VIEW", "SEQUENCE", "MACRO", "TYPE"):
                target = node.this.this if isinstance(node.this, exp.UserDefinedFunction) else None
                if (t := table_of(target or node.this)) is not None:
                    written.append((t, kind == "TABLE"))
        elif isinstance(node, exp.Drop):
            dropped.extend(t for t in node.args.get("tables") or [] if isinstance(t, exp.Table))
        elif isinstance(node, exp.Comment) and (t := table_of(node.this)) is not None:
            written.append((t, True))
    return written, dropped, renames


def _is_temporary(tree: exp.Expr) -> bool:
    for node in tree.find_all(exp.Create):
        props = node.args.get("properties")
        if props is not None and props.find(exp.TemporaryProperty) is not None:
            return True
    return False


def _parse(sql: str) -> exp.Expr | None:
    """The DuckDB statement as a sqlglot tree; None when sqlglot cannot represent it."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (ParseError, TokenError):
        return None
    return None if isinstance(tree, exp.Command) else tree


def _first_word(sql: str) -> str:
    stripped = re.sub(r"^(\s|--[^\n]*\n|/\*.*?\*/)+", "", sql, flags=re.S)
    return (stripped.split(None, 1) or [""])[0].upper().rstrip("(;")


_FOREIGN = re.compile(rf"{INTERNAL_SCHEMA}|{SCHEMA_PREFIX}[0-9a-f]{{32}}", re.I)


def _check_text(statements: Any, schema: str) -> None:
    """Belt and braces over the tree checks: also catches names inside strings (query(),
    query_table()) and statements sqlglot cannot parse."""
    for st in statements:
        for match in _FOREIGN.finditer(st.sql):
            if match.group(0).lower() != schema:
                raise AgentError.not_found(f"schema {match.group(0)!r} does not exist")


def _plan(
    cur: duckdb.DuckDBPyConnection,
    schema: str,
    tree: exp.Expr,
    *,
    strict: bool,
    copied: set[str],
) -> _Plan:
    """Check a statement against the branch rules and list the tables to copy first.

    strict (branch_query): writes must stay inside the branch, no reads of other branches or
    the internal schema, no TEMP objects. Not strict (wire helper): only the copy-on-write and
    the drop/rename guards, since the wire session chose its own search_path.
    """
    plan = _Plan()
    own = schema.lower()
    written, dropped, renames = _targets(tree)
    if strict:
        if _is_temporary(tree):
            raise _refused("TEMP objects are not allowed inside a branch")
        for table in tree.find_all(exp.Table):
            db = (table.db or "").lower()
            if db == INTERNAL_SCHEMA or (db.startswith(SCHEMA_PREFIX) and db != own):
                raise AgentError.not_found(f"schema {table.db!r} does not exist")
    branch_tables = _base_tables(cur, schema)
    main_tables = _branchable(cur)

    def in_branch(table: exp.Table) -> bool:
        catalog, db, _ = _name(table)
        if catalog is not None and strict:
            raise _refused("three-part names are not allowed inside a branch")
        if db is None:
            return True
        if db.lower() == own:
            return True
        if strict:
            raise AgentError.forbidden(
                f"branch_query writes only inside its branch, not to {db}.{table.name}"
            )
        return False

    for table in dropped:
        if not in_branch(table):
            continue
        low = table.name.lower()
        if low in main_tables or low in copied:
            raise _refused(
                f"cannot drop {table.name} inside a branch: it is a table of main "
                "(discard the branch, or merge and drop it in main)"
            )
    for table, copy in written:
        if not in_branch(table):
            continue
        low = table.name.lower()
        if renames and (low in main_tables or low in copied):
            raise _refused(f"cannot rename {table.name} inside a branch: it is a table of main")
        if low in branch_tables:
            continue  # already a real table of the branch
        if low in main_tables and copy and main_tables[low] not in plan.copy:
            # A view over main (or a main table created after branching): copy it first.
            plan.copy.append(main_tables[low])
    return plan


def _materialize(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> str:
    """Replace branch view `schema.table` by a real copy of main.table.

    Built under a scratch name and renamed at the end, so that on a cursor in autocommit
    mode a failure part-way never leaves the branch without its view.
    """
    tmp = _TMP_PREFIX + table
    qs = _q(schema)
    cur.execute(f"DROP TABLE IF EXISTS {qs}.{_q(tmp)}")
    kept = _copy_table(cur, "main", table, schema, tmp)
    cur.execute(f"DROP VIEW IF EXISTS {qs}.{_q(table)}")
    cur.execute(f"ALTER TABLE {qs}.{_q(tmp)} RENAME TO {_q(table)}")
    return kept


def _record_copies(
    cur: duckdb.DuckDBPyConnection, schema: str, current: list[dict], new: list[dict]
) -> None:
    if not new:
        return
    cur.execute(
        f"UPDATE {TABLE} SET tables_copied = ? WHERE schema_name = ?",
        [json.dumps(current + new), schema],
    )


def _copied_list(raw: Any) -> list[dict]:
    if raw is None:
        return []
    value = json.loads(raw) if isinstance(raw, str) else raw
    return list(value or [])


# --- the service --------------------------------------------------------------------------


class Branches:
    def __init__(self, layer: AgentLayer) -> None:
        self.layer = layer
        self.expiry_interval = EXPIRY_INTERVAL_S
        self._task: asyncio.Task[None] | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create this service's tables (idempotent)."""
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {TABLE} (
                branch_id VARCHAR PRIMARY KEY,
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                name VARCHAR NOT NULL,
                description VARCHAR,
                schema_name VARCHAR NOT NULL,
                status VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                expires_at TIMESTAMPTZ NOT NULL,
                merged_at TIMESTAMPTZ,
                ended_at TIMESTAMPTZ,
                strategy VARCHAR,
                base_tables JSON,
                tables_copied JSON,
                merge_report JSON
            )"""
        )

    async def start(self) -> None:
        try:
            await self.expire_all()
        except Exception:  # a broken sweep must not stop the server starting
            log.exception("expiring branches at start failed")
        self._task = asyncio.create_task(self._expiry_loop(), name="branch-expiry")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _expiry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.expiry_interval)
            try:
                await self.expire_all()
            except Exception:
                log.exception("expiring branches failed")

    def _lock(self, branch_id: str) -> asyncio.Lock:
        return self._locks.setdefault(branch_id, asyncio.Lock())

    # -- shared pieces --

    def _load(
        self, cur: duckdb.DuckDBPyConnection, who: Identity, branch_id: str
    ) -> dict[str, Any]:
        row = cur.execute(
            f"SELECT {_SELECT} FROM {TABLE} WHERE branch_id = ? AND org_id = ? AND agent_id = ?",
            [branch_id, who.org_id, who.agent_id],
        ).fetchone()
        if row is None:
            raise AgentError.not_found(f"branch {branch_id} does not exist")
        return self._row(row)

    @staticmethod
    def _row(row: tuple) -> dict[str, Any]:
        out = dict(zip([n for n, _ in _COLUMNS], row, strict=True))
        out["tables_copied"] = _copied_list(out["tables_copied"])
        return out

    def _active(self, cur: duckdb.DuckDBPyConnection, who: Identity, branch_id: str) -> dict:
        """The caller's branch, if it can still be used; expires it when overdue."""
        branch = self._load(cur, who, branch_id)
        if branch["status"] == "active" and branch["expires_at"] <= _now():
            self._end(cur, branch["branch_id"], branch["schema_name"], "expired")
            branch["status"] = "expired"
        if branch["status"] != "active":
            raise AgentError.conflict(
                f"branch {branch_id} is {branch['status']}: it can no longer be used"
            )
        return branch

    @staticmethod
    def _end(cur: duckdb.DuckDBPyConnection, branch_id: str, schema: str, status: str) -> None:
        cur.execute(f"DROP SCHEMA IF EXISTS {_q(schema)} CASCADE")
        cur.execute(
            f"UPDATE {TABLE} SET status = ?, ended_at = ? WHERE branch_id = ?",
            [status, _now(), branch_id],
        )

    @staticmethod
    def _in_txn(cur: duckdb.DuckDBPyConnection, fn: Callable[[], T]) -> T:
        cur.begin()
        try:
            out = fn()
        except BaseException:
            cur.rollback()
            raise
        cur.commit()
        return out

    # -- operations --

    async def create(
        self, who: Identity, name: str | None, description: str | None, ttl_seconds: Any
    ) -> dict[str, Any]:
        if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float):
            raise AgentError.invalid("ttl_seconds must be a number of seconds")
        if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise AgentError.invalid(f"ttl_seconds must be > 0 and <= {MAX_TTL_SECONDS}")
        if name is not None and not isinstance(name, str):
            raise AgentError.invalid("name must be a string")
        branch_id = uuid.uuid4().hex
        schema = SCHEMA_PREFIX + branch_id
        name = (name or "").strip() or f"branch-{branch_id[:8]}"
        now = _now()
        expires = now + dt.timedelta(seconds=float(ttl_seconds))

        def work(cur: duckdb.DuckDBPyConnection) -> int:
            tables = sorted(_branchable(cur).values())
            cur.execute(f"CREATE SCHEMA {_q(schema)}")
            for table in tables:
                cur.execute(
                    f"CREATE VIEW {_q(schema)}.{_q(table)} AS SELECT * FROM main.{_q(table)}"
                )
            cur.execute(
                f"INSERT INTO {TABLE} (branch_id, org_id, agent_id, name, description, "
                "schema_name, status, created_at, expires_at, base_tables, tables_copied) "
                "VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, '[]')",
                [
                    branch_id,
                    who.org_id,
                    who.agent_id,
                    name,
                    description or "",
                    schema,
                    now,
                    expires,
                    json.dumps(tables),
                ],
            )
            return len(tables)

        count = await self.layer.db.transaction(work)
        return {
            "branch_id": branch_id,
            "schema_name": schema,
            "name": name,
            "status": "active",
            "table_count": count,
            "created_at": now,
            "expires_at": expires,
        }

    async def query(self, who: Identity, branch_id: Any, sql: Any) -> list[dict[str, Any]]:
        bid = _normalise_id(branch_id)
        if not isinstance(sql, str) or not sql.strip():
            raise AgentError.invalid("sql must be a non-empty string")
        try:
            statements = transpile(sql, vector_dims=self.layer.dims)
        except TranspileError as err:
            raise AgentError(
                "invalid_sql", err.message, sqlstate=err.sqlstate, http_status=422
            ) from None
        if not statements:
            raise AgentError.invalid("sql holds no statement")
        prepared: list[tuple[Any, exp.Expr | None]] = []
        for st in statements:
            if st.kind not in _QUERY_KINDS:
                try:  # report a syntax error as one, not as "not allowed"
                    duckdb.extract_statements(st.sql)
                except duckdb.ParserException as exc:
                    raise _db_error(exc, st.sql) from None
                raise _refused(f"{st.tag} is not allowed inside branch_query")
            if st.agent_calls:
                raise _refused("agent functions cannot be called inside branch_query")
            if st.bind_texts:
                raise _refused("semantic search functions are not supported inside branch_query")
            if st.kind == "explain":
                if re.match(r"\s*EXPLAIN\s+ANALY[SZ]E", st.sql, re.I):
                    raise _refused("EXPLAIN ANALYZE is not allowed inside branch_query")
                prepared.append((st, None))
                continue
            tree = _parse(st.sql)
            if tree is None and st.kind != "select":
                raise _refused(f"cannot tell which tables this {st.tag} writes")
            prepared.append((st, tree))

        def work(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            branch = self._active(cur, who, bid)
            schema = branch["schema_name"]
            _check_text(statements, schema)
            before = cur.execute("SELECT current_setting('search_path')").fetchone()[0]
            cur.execute(f"SET search_path = '{schema},main'")  # schema: branch_<hex> only
            try:
                return self._in_txn(cur, lambda: self._run_statements(cur, branch, prepared))
            finally:  # the cursor goes back to the pool: leave it as we found it
                if before:
                    cur.execute("SET search_path = '{}'".format(before.replace("'", "''")))
                else:
                    cur.execute("RESET search_path")

        async with self._lock(bid):
            return await self.layer.db.run(work)

    def _run_statements(
        self,
        cur: duckdb.DuckDBPyConnection,
        branch: dict[str, Any],
        prepared: list[tuple[Any, exp.Expr | None]],
    ) -> list[dict[str, Any]]:
        schema = branch["schema_name"]
        copied: list[dict] = list(branch["tables_copied"])
        new: list[dict] = []
        rows: list[dict[str, Any]] = []
        for st, tree in prepared:
            if tree is not None:
                names = {c["table"].lower() for c in copied + new}
                plan = _plan(cur, schema, tree, strict=True, copied=names)
                for table in plan.copy:
                    try:
                        kept = _materialize(cur, schema, table)
                    except duckdb.Error as exc:
                        raise _db_error(exc) from None
                    new.append({"table": table, "kept": kept, "copied_at": _now().isoformat()})
            try:
                cur.execute(st.sql)
                rows = self._result(cur, st, tree)
            except duckdb.Error as exc:
                raise _db_error(exc, st.sql) from None
        _record_copies(cur, schema, copied, new)
        return rows

    @staticmethod
    def _result(cur: duckdb.DuckDBPyConnection, st: Any, tree: exp.Expr | None) -> list[dict]:
        returning = tree is not None and tree.args.get("returning") is not None
        desc = cur.description
        if st.kind in ("select", "explain") or returning:
            if desc is None:
                return []
            names: list[str] = []
            pg_names = st.column_names or ()
            for i, d in enumerate(desc):
                base = pg_names[i] if i < len(pg_names) and pg_names[i] else d[0]
                candidate, n = base, 1
                while candidate in names:  # duplicate column names would collapse in a dict
                    n += 1
                    candidate = f"{base}_{n}"
                names.append(candidate)
            fetched = cur.fetchmany(MAX_ROWS + 1)
            if len(fetched) > MAX_ROWS:
                raise AgentError.invalid(
                    f"branch_query returns at most {MAX_ROWS} rows", hint="add a LIMIT"
                )
            return [
                {"row": {k: _jsonable(v) for k, v in zip(names, r, strict=True)}} for r in fetched
            ]
        out: dict[str, Any] = {"command": st.tag}
        if desc is not None and len(desc) == 1 and desc[0][0] == "Count":
            row = cur.fetchone()
            if row is not None:
                out["rows_affected"] = int(row[0])
        return [{"row": out}]

    async def merge(self, who: Identity, branch_id: Any, strategy: Any) -> dict[str, Any]:
        bid = _normalise_id(branch_id)
        if strategy not in STRATEGIES:
            raise AgentError.invalid(
                f"unknown merge strategy {strategy!r}", hint="use branch_wins or main_wins"
            )

        def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            # Checked before the transaction, so expiring an overdue branch is not rolled back.
            self._active(cur, who, bid)

            def inner() -> dict[str, Any]:
                branch = self._active(cur, who, bid)
                schema = branch["schema_name"]
                try:
                    report = _merge_tables(cur, schema, strategy)
                except duckdb.Error as exc:
                    raise _db_error(exc) from None
                merged_at = _now()
                cur.execute(f"DROP SCHEMA {_q(schema)} CASCADE")
                cur.execute(
                    f"UPDATE {TABLE} SET status = 'merged', merged_at = ?, ended_at = ?, "
                    "strategy = ?, merge_report = ? WHERE branch_id = ?",
                    [merged_at, merged_at, strategy, json.dumps(report), bid],
                )
                return {
                    "branch_id": bid,
                    "status": "merged",
                    "strategy": strategy,
                    "merged_at": merged_at,
                    "tables": report,
                }

            return self._in_txn(cur, inner)

        async with self._lock(bid):
            out = await self.layer.db.run(work)
        self._locks.pop(bid, None)
        return out

    async def discard(self, who: Identity, branch_id: Any) -> dict[str, Any]:
        bid = _normalise_id(branch_id)

        def work(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            def inner() -> dict[str, Any]:
                branch = self._load(cur, who, bid)
                if branch["status"] != "active":
                    raise AgentError.conflict(f"branch {bid} is already {branch['status']}")
                self._end(cur, bid, branch["schema_name"], "discarded")
                return {"branch_id": bid, "status": "discarded", "discarded_at": _now()}

            return self._in_txn(cur, inner)

        async with self._lock(bid):
            out = await self.layer.db.run(work)
        self._locks.pop(bid, None)
        return out

    async def list_branches(self, who: Identity, status: Any) -> list[dict[str, Any]]:
        if status in (None, "", "all"):
            status = None
        elif status not in STATUSES:
            raise AgentError.invalid(
                f"unknown branch status {status!r}", hint="one of " + ", ".join(STATUSES)
            )
        await self.expire(who)  # so an overdue branch is listed as expired, not active

        def work(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            sql = f"SELECT {_SELECT} FROM {TABLE} WHERE org_id = ? AND agent_id = ?"
            args: list[Any] = [who.org_id, who.agent_id]
            if status is not None:
                sql += " AND status = ?"
                args.append(status)
            return [
                self._row(r) for r in cur.execute(sql + " ORDER BY created_at", args).fetchall()
            ]

        return await self.layer.db.run(work)

    async def expire(self, who: Identity | None) -> list[dict[str, Any]]:
        """Expire overdue active branches: the caller's, or everybody's (who=None)."""

        def work(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            sql = (
                f"SELECT branch_id, name, schema_name, expires_at FROM {TABLE} "
                "WHERE status = 'active' AND expires_at <= ?"
            )
            args: list[Any] = [_now()]
            if who is not None:
                sql += " AND org_id = ? AND agent_id = ?"
                args += [who.org_id, who.agent_id]
            out = []
            for bid, name, schema, expires_at in cur.execute(sql, args).fetchall():
                try:  # one branch per transaction: a failure leaves the others expired
                    self._in_txn(cur, lambda b=bid, s=schema: self._end(cur, b, s, "expired"))
                except duckdb.Error:
                    log.exception("expiring branch %s failed", bid)
                    continue
                out.append(
                    {"branch_id": bid, "name": name, "status": "expired", "expires_at": expires_at}
                )
            return out

        out = await self.layer.db.run(work)
        for row in out:
            self._locks.pop(row["branch_id"], None)
        return out

    async def expire_all(self) -> int:
        return len(await self.expire(None))

    # -- wire helper --

    def prepare_write_sync(
        self,
        cur: duckdb.DuckDBPyConnection,
        schema_name: str,
        statement_sql: str,
        who: Identity | None = None,
    ) -> list[str]:
        """Copy-on-write for a wire session whose search_path starts with a branch schema.

        Call it on the session's own cursor (worker thread), just before running the DuckDB
        text `statement_sql` (one transpiled statement), inside the statement's transaction
        if there is one. It returns the main tables it copied into the branch (usually []),
        after which the statement can run as written. `schema_name` that is not a branch:
        returns [] (nothing to do). Raises AgentError when the branch is not active (or not
        `who`'s, when given), for DROP/RENAME of a table of main inside the branch, and for a
        write statement whose targets sqlglot cannot determine. Writes qualified with another
        schema (e.g. main.t) are left alone: the session asked for them explicitly.
        """
        row = cur.execute(
            f"SELECT branch_id, org_id, agent_id, status, expires_at, tables_copied "
            f"FROM {TABLE} WHERE schema_name = ?",
            [schema_name.lower()],
        ).fetchone()
        if row is None:
            return []
        bid, org, agent, status, expires_at, raw_copied = row
        if who is not None and (who.org_id, who.agent_id) != (org, agent):
            raise AgentError.not_found(f"branch {bid} does not exist")
        if status != "active" or expires_at <= _now():
            raise AgentError.conflict(f"branch {bid} is {status}: it can no longer be used")
        tree = _parse(statement_sql)
        if tree is None:
            if _first_word(statement_sql) in _WRITE_WORDS:
                raise _refused("cannot tell which tables this statement writes in a branch")
            return []
        copied = _copied_list(raw_copied)
        names = {c["table"].lower() for c in copied}
        plan = _plan(cur, schema_name.lower(), tree, strict=False, copied=names)
        new = []
        for table in plan.copy:
            kept = _materialize(cur, schema_name.lower(), table)
            new.append({"table": table, "kept": kept, "copied_at": _now().isoformat()})
        _record_copies(cur, schema_name.lower(), copied, new)
        return [c["table"] for c in new]


def _merge_tables(cur: duckdb.DuckDBPyConnection, schema: str, strategy: str) -> list[dict]:
    """Apply `strategy` for every base table of the branch (see the module docstring)."""
    report: list[dict] = []
    main_tables = _base_tables(cur, "main")
    qs = _q(schema)
    for low, table in sorted(_base_tables(cur, schema).items()):
        if low.startswith(_TMP_PREFIX):
            continue  # leftover of an interrupted copy: not data of the branch
        src = f"{qs}.{_q(table)}"
        if low not in main_tables:
            kept = _copy_table(cur, schema, table, "main", table)
            n = cur.execute(f"SELECT count(*) FROM main.{_q(table)}").fetchone()[0]
            report.append({"table": table, "action": "created", "rows_inserted": n, "kept": kept})
            continue
        main_name = main_tables[low]
        dst = f"main.{_q(main_name)}"
        branch_cols = {c.lower() for c in _columns(cur, schema, table)}
        common = [c for c in _columns(cur, "main", main_name) if c.lower() in branch_cols]
        if not common:
            raise AgentError.conflict(f"{table}: the branch and main share no column")
        cols = ", ".join(_q(c) for c in common)
        if strategy == "branch_wins":
            deleted = cur.execute(f"DELETE FROM {dst}").fetchone()[0]
            inserted = cur.execute(f"INSERT INTO {dst} ({cols}) SELECT {cols} FROM {src}")
            report.append(
                {
                    "table": main_name,
                    "action": "replaced",
                    "rows_deleted": int(deleted),
                    "rows_inserted": int(inserted.fetchone()[0]),
                }
            )
            continue
        pk = _primary_key(cur, "main", main_name)
        if pk:
            if any(p.lower() not in branch_cols for p in pk):
                raise AgentError.conflict(f"{table}: the branch lacks main's primary key columns")
            match = " AND ".join(f"m.{_q(p)} = b.{_q(p)}" for p in pk)
            sel = ", ".join(f"b.{_q(c)}" for c in common)
            sql = (
                f"INSERT INTO {dst} ({cols}) SELECT {sel} FROM {src} b "
                f"WHERE NOT EXISTS (SELECT 1 FROM {dst} m WHERE {match})"
            )
        else:
            sql = (
                f"INSERT INTO {dst} ({cols}) "
                f"SELECT {cols} FROM {src} EXCEPT SELECT {cols} FROM {dst}"
            )
        inserted = cur.execute(sql).fetchone()[0]
        report.append(
            {
                "table": main_name,
                "action": "inserted_missing",
                "key": pk or None,
                "rows_inserted": int(inserted),
            }
        )
    return report


# --- registered functions -----------------------------------------------------------------


@agent_function(
    "branch_create",
    params=[
        Param("name", "VARCHAR", ""),
        Param("description", "VARCHAR", ""),
        Param("ttl_seconds", "BIGINT", 3600),
    ],
    columns=[
        ("branch_id", "VARCHAR"),
        ("schema_name", "VARCHAR"),
        ("name", "VARCHAR"),
        ("status", "VARCHAR"),
        ("table_count", "BIGINT"),
        ("created_at", "TIMESTAMPTZ"),
        ("expires_at", "TIMESTAMPTZ"),
    ],
    scope="branch:create",
    writes=True,
)
async def branch_create(
    layer: AgentLayer, who: Identity, name: str, description: str, ttl_seconds: int
) -> list[dict[str, Any]]:
    """Create a branch: a schema of views over main's tables, copied on first write."""
    return [await layer.branches.create(who, name, description, ttl_seconds)]


@agent_function(
    "branch_query",
    params=[Param("branch_id", "VARCHAR"), Param("sql", "VARCHAR")],
    columns=[("row", "JSON")],
    scope="branch:query",
    writes=True,
)
async def branch_query(
    layer: AgentLayer, who: Identity, branch_id: str, sql: str
) -> list[dict[str, Any]]:
    """Run SQL inside a branch; one JSON object per result row of the last statement."""
    return await layer.branches.query(who, branch_id, sql)


@agent_function(
    "branch_merge",
    params=[Param("branch_id", "VARCHAR"), Param("strategy", "VARCHAR", "branch_wins")],
    columns=[
        ("branch_id", "VARCHAR"),
        ("status", "VARCHAR"),
        ("strategy", "VARCHAR"),
        ("merged_at", "TIMESTAMPTZ"),
        ("tables", "JSON"),
    ],
    scope="branch:merge",
    writes=True,
)
async def branch_merge(
    layer: AgentLayer, who: Identity, branch_id: str, strategy: str
) -> list[dict[str, Any]]:
    """Merge a branch into main (branch_wins or main_wins) and drop it."""
    return [await layer.branches.merge(who, branch_id, strategy)]


@agent_function(
    "branch_discard",
    params=[Param("branch_id", "VARCHAR")],
    columns=[("branch_id", "VARCHAR"), ("status", "VARCHAR"), ("discarded_at", "TIMESTAMPTZ")],
    scope="branch:discard",
    writes=True,
)
async def branch_discard(layer: AgentLayer, who: Identity, branch_id: str) -> list[dict[str, Any]]:
    """Drop a branch and everything written in it."""
    return [await layer.branches.discard(who, branch_id)]


@agent_function(
    "branch_list",
    params=[Param("status", "VARCHAR", "")],
    columns=_COLUMNS,
    scope="branch:read",
)
async def branch_list(layer: AgentLayer, who: Identity, status: str) -> list[dict[str, Any]]:
    """The caller's branches, optionally only those with one status."""
    return await layer.branches.list_branches(who, status)


@agent_function(
    "expire_branches",
    params=[],
    columns=[
        ("branch_id", "VARCHAR"),
        ("name", "VARCHAR"),
        ("status", "VARCHAR"),
        ("expires_at", "TIMESTAMPTZ"),
    ],
    scope="branch:discard",
    writes=True,
)
async def expire_branches(layer: AgentLayer, who: Identity) -> list[dict[str, Any]]:
    """Expire the caller's branches past their expires_at now (a background task does it too)."""
    return await layer.branches.expire(who)
