"""What a statement handler (COPY, cursors, commands, savepoints, table rebuilds, embedded
columns) gets from the connection, as protocols.

The Runner (runner.py) and the Session (session.py) call the handlers; typing the
handlers against these protocols instead of those classes keeps the imports one way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import duckdb

    from proxy.access.owner_txn import PendingOwners
    from proxy.agent.layer import AgentLayer
    from proxy.core.identity import Identity
    from proxy.db.backends import Activity
    from proxy.db.commit_clock import OpenWrite
    from proxy.db.settings import SessionSettings
    from proxy.pgserver.column_origins import OriginMap
    from proxy.pgserver.notify_wire import SessionNotify
    from proxy.pgserver.params import ParamTypes
    from proxy.pgserver.portal import Portal, Prepared
    from proxy.pgserver.results import Column
    from proxy.pgserver.sequence_values import SessionSequences
    from proxy.semantic.engine import SemanticEngine
    from proxy.wire import messages as m
    from transpiler import ColumnHints, Statement


class StatementRunner(Protocol):
    """The connection's Runner: its DuckDB cursor, transaction state and settings."""

    cursor: duckdb.DuckDBPyConnection
    settings: SessionSettings
    txn_status: str  # "I" idle, "T" in a block, "E" failed block (ReadyForQuery's letter)
    implicit: bool  # several statements of one Query run as one implicit block
    write: OpenWrite
    param_types: ParamTypes
    origins: OriginMap  # RowDescription's table oid / attnum per statement
    semantic: SemanticEngine
    agent: AgentLayer | None
    # Owner records of this connection's open block, applied at COMMIT (owner_outcome.py).
    pending_owners: PendingOwners
    notify: SessionNotify  # its LISTEN / NOTIFY, committed with the block (notify_wire.py)
    who: Identity | None  # the agent identity, fixed at connect

    async def call(self, fn: Callable[..., Any], *args: Any, sql: str | None = None) -> Any: ...

    async def take_cursor(self) -> None: ...

    def interrupted(self) -> bool: ...

    def settled(self, query: bool = True) -> bool: ...

    async def show_agent_relations(self, st: Statement) -> None: ...

    async def execute_duckdb(
        self, portal: Portal, session: Any, max_rows: int, describe: bool
    ) -> None: ...

    # A DO block's statements go through these (do_blocks.py).
    async def execute(
        self, portal: Portal, session: Any, *, max_rows: int, describe: bool
    ) -> None: ...

    async def begin_implicit(self) -> None: ...

    async def end_implicit(self) -> None: ...

    async def statement_failed(self) -> None: ...

    # ... and a data-modifying WITH's parts (dml_ctes.py).
    def close_portal(self, portal: Portal) -> None: ...

    async def describe_statement(
        self, st: Statement | None, param_oids: Sequence[int] = (), session: Any = None
    ) -> tuple[Column, ...] | None: ...


class ClientSession(Protocol):
    """The connection's Session: output to the client, its portals and statements."""

    runner: StatementRunner
    portals: dict[str, Portal]
    prepared: dict[str, Prepared]
    sql_prepared: dict[str, tuple[list[str], str]]  # SQL PREPARE (sql_prepared.py)
    sql_cursors: Any  # cursors.CursorSet (cursors.py is itself a handler)
    savepoints: Any  # savepoint_log.SavepointState
    sequences: SessionSequences  # this session's currval / lastval (sequence_values.py)
    temp_on_commit: Any  # temp_on_commit.TempOnCommit: ON COMMIT DROP / DELETE ROWS tables
    activity: Activity  # what pg_stat_activity / pg_stat_progress_copy show of it

    # The connection's output and input (proxy/pgserver/server.py's Connection).
    out: Callable[[bytes | memoryview], None]  # memoryview: a batch of rows in Arrow's buffer
    flush: Callable[[], Awaitable[None]]
    flush_if_large: Callable[[], Awaitable[None]]
    push: Callable[[], None]  # queued output to the socket now, from the connection's thread
    receive: Callable[[], Awaitable[m.FrontendMessage]]
    sync_next: Callable[[], bool]  # the next message, already received, is a Sync
    in_extended_block: bool

    def send_notice(
        self, message: str, sqlstate: str = "00000", severity: str = "NOTICE"
    ) -> None: ...

    def discard_all(self) -> None: ...

    def transpile_sql(self, sql: str, hints: ColumnHints | None) -> tuple[Statement, ...]: ...
