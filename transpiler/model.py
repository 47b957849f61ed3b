"""Immutable results of `transpile`: statements, markers and session commands."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from transpiler.database_ddl import DatabaseDdl
from transpiler.domains import DomainDdl
from transpiler.notify_statements import NotifyStatement

if TYPE_CHECKING:
    from sqlglot import exp

    from transpiler.agent_calls import AgentCall
    from transpiler.alter_type import AlterColumnTypes
    from transpiler.column_origins import Origins
    from transpiler.constraint_ddl import ConstraintDdl
    from transpiler.identity import IdentityAlter, IdentityColumns
    from transpiler.matviews import MatviewDdl
    from transpiler.sequence_draws import Draws
    from transpiler.table_like import TableLike
    from transpiler.trigger_ddl import TriggerDdl
    from transpiler.upsert_keys import Upsert

MarkerKind = Literal["text", "column", "param"]
MarkerRole = Literal["query", "passage"]


@dataclass(frozen=True, slots=True)
class Marker:
    """One `__HATI_EMBED__(...)` call in a statement's SQL.

    kind "text": value is the literal search text (role "query");
    kind "column": value is the column expression as DuckDB SQL (role "passage");
    kind "param": value is the parameter number n of `$n` (role "query").
    """

    kind: MarkerKind
    value: str | int
    role: MarkerRole


@dataclass(frozen=True, slots=True)
class SetCommand:
    """`SET [SESSION|LOCAL] name {=|TO} value`; value None means DEFAULT / LOCAL."""

    name: str
    value: str | None
    local: bool = False


@dataclass(frozen=True, slots=True)
class ResetCommand:
    """`RESET name`; name None means `RESET ALL`."""

    name: str | None


@dataclass(frozen=True, slots=True)
class ShowCommand:
    """`SHOW name`; `SHOW ALL` gives name "all"."""

    name: str


TxAction = Literal["begin", "commit", "rollback", "savepoint", "release", "rollback_to"]


@dataclass(frozen=True, slots=True)
class TransactionCommand:
    """Transaction control. `options` holds e.g. "isolation level serializable read only"."""

    action: TxAction
    options: str = ""
    savepoint: str | None = None


@dataclass(frozen=True, slots=True)
class UtilityCommand:
    """Statements the server acknowledges itself: DISCARD ALL, CLOSE ALL, DEALLOCATE [ALL|name], CREATE EXTENSION
    name, LOCK TABLE names (as written: "lock public.t, \"T\""). `name` is the normalised
    statement, lower case, e.g. "discard all", "close all",
    "deallocate all", "deallocate stmt1", "create extension vector"."""

    name: str
    # VACUUM / ANALYZE: each relation as written and its column names (may be empty).
    targets: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class IndexName:
    """The name hatiproxy chose for an unnamed `CREATE INDEX ON table (...)`, and what
    PostgreSQL's rule builds it from, so the server can number it when the name is taken
    (`t_a_idx`, then `t_a_idx1`, ...; see create_index.index_name)."""

    schema: str | None
    table: str
    columns: str
    chosen: str


OTHERS = "others"  # the PL/pgSQL condition that matches (almost) any error


@dataclass(frozen=True, slots=True)
class DoHandler:
    """`WHEN <conditions> THEN <statements>`: SQLSTATEs (a class as "xx000") or "others"."""

    conditions: tuple[str, ...]
    statements: tuple[str, ...]  # () for `THEN NULL;`

    def matches(self, sqlstate: str) -> bool:
        for cond in self.conditions:
            if cond == OTHERS:  # as PL/pgSQL: all but query_canceled and assert_failure
                if sqlstate not in ("57014", "P0004"):
                    return True
            elif cond == sqlstate or (cond.endswith("000") and cond[:2] == sqlstate[:2]):
                return True
        return False


@dataclass(frozen=True, slots=True)
class DoIf:
    """`IF <condition> THEN ... [ELSIF <condition> THEN ...] [ELSE ...] END IF`: the
    branches in order, each a condition's SQL (None: ELSE) and its statements; the first
    whose condition is true runs."""

    branches: tuple[tuple[str | None, tuple[str | DoIf, ...]], ...]


@dataclass(frozen=True, slots=True)
class DoBlock:
    """A DO statement's block: statements (SQL, or an IF) run as one subtransaction, then
    the first handler whose conditions match an error it raised."""

    statements: tuple[str | DoIf, ...]
    handlers: tuple[DoHandler, ...] = ()

    def handler_for(self, sqlstate: str) -> DoHandler | None:
        return next((h for h in self.handlers if h.matches(sqlstate)), None)


@dataclass(frozen=True, slots=True)
class DmlCteStep:
    """One data-modifying CTE of a WITH (transpiler/dml_cte.py): `sql` is the DML as
    PostgreSQL text (the CTEs before it in front, as WITH); its RETURNING rows go to the
    connection's temp table `relation` (None: no RETURNING, nothing to keep)."""

    name: str
    sql: str
    relation: str | None
    # The statement's parameter numbers `sql` uses, in order: its $1, $2 ... are these
    # (DuckDB wants exactly the parameters a statement names).
    params: tuple[int, ...] = ()
    target: str = ""  # the table it modifies (name, lower case)


@dataclass(frozen=True, slots=True)
class DmlCte:
    """A statement whose WITH holds INSERT / UPDATE / DELETE: the server runs the steps in
    order, then `main` (each DML CTE there reads its temp table), all or nothing.
    `describe`: `main` with each DML CTE an empty SELECT of its RETURNING list (the
    columns without running anything)."""

    steps: tuple[DmlCteStep, ...]
    main: str
    describe: str
    main_params: tuple[int, ...] = ()  # as DmlCteStep.params, for `main`
    describe_params: tuple[int, ...] = ()  # and for `describe`
    main_rows: bool = False  # the main statement answers rows (a query, or RETURNING)


@dataclass(frozen=True, slots=True)
class CommentCommand:
    """COMMENT ON SCHEMA / CONSTRAINT / EXTENSION / DATABASE / FUNCTION (transpiler/object_comments.py).
    kind: "schema", "constraint", "extension", "database" or "function"; schema: DuckDB's name (main for public; None: the search path's);
    table: the constraint's table; text None removes the comment."""

    kind: str
    schema: str | None
    table: str | None
    name: str
    text: str | None


Command = (
    SetCommand
    | ResetCommand
    | ShowCommand
    | TransactionCommand
    | UtilityCommand
    | DoBlock
    | DmlCte
    | CommentCommand
    | DomainDdl
    | DatabaseDdl
    | NotifyStatement
)


@dataclass(frozen=True, slots=True)
class Statement:
    """One transpiled statement.

    kind: select, insert, update, delete, merge, ddl, set, reset, show, begin, commit,
    rollback, savepoint (SAVEPOINT / RELEASE / ROLLBACK TO), utility (DISCARD, CLOSE,
    LISTEN, UNLISTEN, DEALLOCATE), copy, explain, do (command: a DoBlock), other.
    tag: the Postgres CommandComplete tag word(s) without counts. The server appends
    counts for tags SELECT ("SELECT n"), INSERT ("INSERT 0 n"), UPDATE, DELETE, MERGE,
    COPY, FETCH, MOVE; CREATE TABLE AS has tag SELECT as in Postgres.
    bind_texts: the distinct text-marker texts in the order `bind_sql` numbers them.
    """

    sql: str
    kind: str
    tag: str
    markers: tuple[Marker, ...] = ()
    param_count: int = 0
    command: Command | None = None
    bind_texts: tuple[str, ...] = ()
    vector_dims: int = 384
    # Postgres names of the result columns where DuckDB's differ (see colnames.py).
    column_names: tuple[str | None, ...] | None = None
    # Result columns PostgreSQL types json, not jsonb (see json_types.py); None: none.
    json_outputs: tuple[bool, ...] | None = None
    # Result columns PostgreSQL types name / name[] ("name", "name[]"; see name_types.py).
    name_outputs: tuple[str | None, ...] | None = None
    # Result columns that are a cast to varchar(n) / varchar: (1043, typmod); see
    # cast_types.py.
    cast_outputs: tuple[tuple[int, int] | None, ...] | None = None
    # Agent table functions lifted out of FROM (see agent_calls.py), and then the client
    # parameter numbers DuckDB gets, in order ($n used only by agent calls drop out).
    agent_calls: tuple[AgentCall, ...] = ()
    duckdb_params: tuple[int, ...] | None = None
    # The agent relations (`_hatidata_agent_memory`, ...) the statement names: the server
    # registers the caller's rows under these names for it (see agent_calls.py).
    agent_relations: tuple[str, ...] = ()
    # What reaches outside the database (server files, URLs, extensions, DuckDB-wide
    # settings), named for error messages, e.g. ("read_csv()", "COPY TO a file"); see
    # external_access.py. Empty for statements that stay inside.
    external_access: tuple[str, ...] = ()
    # ALTER TABLE ... ALTER COLUMN ... TYPE: the request, for a table rebuild when DuckDB
    # cannot change the type in place (see alter_type.py, proxy/pgserver/alter_rebuild.py).
    alter_types: AlterColumnTypes | None = None
    # ALTER TABLE ADD / DROP CONSTRAINT, or a CREATE TABLE's FOREIGN KEYs (taken out of
    # `sql`): carried out by the server (constraint_ddl.py, proxy/pgserver/constraint_ddl.py).
    constraints: ConstraintDdl | None = None
    # `sql` holds several DuckDB statements (DROP a, b; TRUNCATE a, b): the server runs
    # them in one transaction, all or nothing (see multi_object.py).
    atomic: bool = False
    # WARNING notices the server sends when the statement runs (behaviour that differs).
    warnings: tuple[str, ...] = ()
    # TRUNCATE ... RESTART IDENTITY: the (schema, table)s whose sequences the server
    # makes again after the TRUNCATE (multi_object.py, proxy/pgserver/sequence_restart.py).
    restart_identity: tuple[tuple[str | None, str], ...] = ()
    # TRUNCATE ... CASCADE: the server truncates the tables whose foreign keys reference
    # these too (without it, such a reference refuses the TRUNCATE: fk_checks.py).
    truncate_cascade: bool = False
    # INSERT ... VALUES ... ON CONFLICT: each row's conflict key, compared once the
    # parameters are bound (upsert_keys.py); None: nothing to compare.
    upsert: Upsert | None = None
    # DROP TABLE: the (schema, table)s whose serial sequences (PostgreSQL's OWNED BY) the
    # server drops with them (proxy/pgserver/sequence_restart.py owned_sequences).
    drop_owned_sequences: tuple[tuple[str | None, str], ...] = ()
    # VACUUM, CREATE INDEX CONCURRENTLY, ...: the command's name when PostgreSQL refuses
    # it inside a transaction block (25001; outside_block.py).
    outside_block: str | None = None
    # ALTER TABLE ... RENAME TO: the ALTER VIEW form, run instead when the target is a view.
    view_sql: str | None = None
    # NOTICEs the server sends when it runs the statement, e.g. that a PostgreSQL index
    # kind DuckDB lacks was not created (see create_index.py).
    notices: tuple[str, ...] = ()
    # CREATE INDEX without a name: the name chosen, numbered by the server if taken.
    index_name: IndexName | None = None
    # Which relation (as written) each result column plainly reads, for RowDescription's
    # table oid / attnum (see column_origins.py); None: none known.
    column_origins: Origins | None = None
    # CREATE / REFRESH / DROP / ALTER MATERIALIZED VIEW: carried out by the server on the
    # stored table `sql` names (matviews.py, proxy/pgserver/matviews.py).
    matview: MatviewDdl | None = None
    # CREATE TABLE ... (LIKE src ...): the server puts the source's columns in
    # (table_like.py, proxy/pgserver/table_like.py); `sql` then also reads the source.
    table_like: TableLike | None = None
    # CREATE TABLE ... AS / CREATE MATERIALIZED VIEW: the (schema or '', table) made;
    # `column_origins` then holds its query's (the server keeps varchar(n) lengths).
    created_as: tuple[str, str] | None = None
    # CREATE TABLE / ALTER TABLE ADD COLUMN: the identity columns it declares, which the
    # server records once it ran (identity.py, proxy/pgserver/identity_ddl.py).
    identity: IdentityColumns | None = None
    # ALTER TABLE ... ALTER COLUMN c {ADD GENERATED | SET GENERATED | RESTART | DROP
    # IDENTITY ...}: carried out by the server (proxy/pgserver/identity_ddl.py).
    identity_alter: IdentityAlter | None = None
    # CREATE TEMP TABLE ... ON COMMIT DROP / DELETE ROWS: (the action, the table's name),
    # carried out by the server when the transaction ends (on_commit.py).
    on_commit: tuple[str, str] | None = None
    # INSERT / UPDATE / MERGE / SELECT: where it may draw sequence values (sequence_draws.py)
    draws: Draws | None = None
    # Which statement of the text it comes from (0 the first): one PostgreSQL statement may
    # become several here (a several-action ALTER TABLE: alter_actions.py).
    source: int = 0
    # CREATE / DROP TRIGGER, ALTER TABLE ... ENABLE / DISABLE TRIGGER: carried out by the
    # server on its trigger registry (trigger_ddl.py, proxy/pgserver/triggers.py).
    trigger: TriggerDdl | None = None
    # Private: the DuckDB tree, kept to regenerate SQL for bind_sql. Never mutated.
    _tree: exp.Expr | None = field(default=None, repr=False, compare=False)
    _bound: dict[int, str] = field(default_factory=dict, repr=False, compare=False)
    # Text kept in front of the rendered tree, e.g. "EXPLAIN " for EXPLAIN <query>.
    _prefix: str = field(default="", repr=False, compare=False)

    def native(self) -> Statement:
        """This statement as DuckDB alone runs it, for paths without the wire server's
        foreign-key registry: a CREATE TABLE keeps its FOREIGN KEYs as DuckDB's own
        (DuckDB refuses actions and DEFERRABLE there); others unchanged. A materialized-view
        statement or CREATE TABLE ... LIKE, which only the wire server carries out (its
        `sql` alone would make a plain table, or empty one on REFRESH), is refused."""
        if self.matview is not None or self.table_like is not None or self.trigger is not None:
            from transpiler.errors import TranspileError

            raise TranspileError(
                "0A000",
                f"{self.tag} is carried out by the PostgreSQL wire server: run it over a "
                "PostgreSQL connection (psql, a driver), not through MCP / REST / a branch",
            )
        ddl = self.constraints
        if ddl is None or not ddl.create or ddl.native_sql is None:
            return self
        return replace(self, sql=ddl.native_sql, constraints=None)

    def bind_sql(self, first_param: int) -> str:
        """The SQL with each text marker replaced by `CAST($k AS FLOAT[dims])`.

        k counts up from `first_param` over the distinct marker texts in order of
        first appearance (`bind_texts`): identical texts share one parameter, so the
        server binds `len(bind_texts)` vectors. Column and param markers stay as
        `__HATI_EMBED__(...)` calls.
        """
        if not self.bind_texts or self._tree is None:
            return self.sql
        cached = self._bound.get(first_param)
        if cached is None:
            # Text markers render as `CAST($k AS FLOAT[dims])` with this generator.
            from transpiler.dialects import generator

            bound = generator((first_param, self.vector_dims)).generate(self._tree, copy=True)
            cached = self._prefix + bound
            if len(self._bound) < 16:
                self._bound[first_param] = cached
        return cached
