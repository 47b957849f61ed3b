"""What a transaction block wrote, kept so ROLLBACK TO SAVEPOINT can replay it.

Inside an explicit block each statement that may write is recorded as DuckDB ran it
(SQL + bound parameters), with the savepoint marks. Nothing is parsed here: whether a
replay would be exact is decided at ROLLBACK TO time (transpiler/replay.py). Changes
that cannot be recorded are noted instead: `undoable` ones (COPY, embed_column, a
write that took any other path than `record`) only block a replay from before them;
`sticky` ones (cursors, agent functions, semantic SQL) block any restart of the
transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from proxy.db.commit_clock import READ_KINDS
from proxy.pgserver import sql_cursors

if TYPE_CHECKING:
    from proxy.pgserver.contexts import StatementRunner
    from transpiler import Statement

MAX_BYTES = 4 * 1024 * 1024  # recorded SQL + parameters per session


@dataclass(slots=True)
class Record:
    sql: str
    params: list[Any] | None
    size: int
    safe: bool = False  # found replay-safe once; the catalog it depends on cannot change
    rows: int | None = None  # rows an INSERT wrote (None: unknown)
    pinned: bool = False  # its serial values made explicit (savepoint_replay.pin_serials)


@dataclass(frozen=True, slots=True)
class Mark:
    """The log's position when a savepoint was set."""

    writes: int
    count: int
    undoable: int


@dataclass
class SavepointState:
    """A session's savepoints and write log for its open transaction (ClientSession.savepoints)."""

    writes: int = 0  # statements that may have changed data (since BEGIN, in a block)
    names: list[str] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    count: int = 0  # statements recorded, kept or not
    records: list[Record] = field(default_factory=list)  # empty once `overflow`
    size: int = 0
    overflow: bool = False
    undoable: list[str] = field(default_factory=list)
    sticky: str | None = None
    clock: int | None = None  # CommitClock.finished before DuckDB's BEGIN (None: unknown)
    settings: dict[str, str] | None = None  # the settings the first record ran with
    settings_changed: bool = False
    dead: str | None = None  # a replay failed: only ROLLBACK ends the block
    pending: Statement | None = None  # its `undoable` entry goes if record() follows

    def mark(self) -> Mark:
        return Mark(self.writes, self.count, len(self.undoable))

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def truncate(self, mark: Mark) -> None:
        """Forget what came after `mark` (its changes were rolled back)."""
        self.writes = mark.writes
        self.count = mark.count
        del self.records[mark.count :]
        self.size = sum(r.size for r in self.records)
        if mark.count == 0:
            self.overflow = False
            self.settings = None
            self.settings_changed = False
        del self.undoable[mark.undoable :]
        self.pending = None


def note_statement(state: SavepointState, runner: StatementRunner, st: Statement) -> None:
    """Before a statement runs: count possible writes; outside a block they commit on
    their own (or with the implicit block), which the commit clock must know."""
    if st.kind in READ_KINDS or st.command is not None:
        return
    if runner.txn_status == "I":
        runner.write.begin()
        if runner.implicit:  # several statements in one Query: they can ROLLBACK TO too
            state.writes += 1
        return
    state.writes += 1
    # In a block: unrecorded until record() says otherwise, so a write that takes any
    # other path (COPY, a table rebuild, ...) still blocks a replay from before it.
    state.undoable.append(st.tag or st.kind.upper())
    state.pending = st
    if sql_cursors.is_cursor_statement(st):
        state.sticky = state.sticky or "a cursor (DECLARE / FETCH / MOVE) was used in it"


def record(
    state: SavepointState,
    settings: dict[str, str],
    st: Statement,
    sql: str,
    params: list[Any] | None,
    effect: str | None,
    rows: int | None = None,
) -> None:
    """After a statement that may write ran in an explicit block (runner._start);
    `settings`: the session's setting values it ran with."""
    if state.pending is st:
        state.pending = None
        state.undoable.pop()  # note_statement's entry for this very statement
    if st.kind in READ_KINDS:  # SELECT INTO, EXPLAIN ANALYZE, a full-text index build
        state.writes += 1
    if effect is not None:
        state.sticky = state.sticky or f"{effect} was used in it"
    state.count += 1
    if state.overflow:
        return
    if state.settings is None:
        state.settings = dict(settings)
    elif settings != state.settings:
        state.settings_changed = True
    size = len(sql) + _size(params)
    if state.size + size > MAX_BYTES:
        state.overflow = True  # free the memory now: no replay can use a partial log
        state.records.clear()
        state.size = 0
        return
    state.records.append(Record(sql, params, size, rows=rows if st.kind == "insert" else None))
    state.size += size


def side_effect(st: Statement, agent: bool, fts: bool, branch: bool) -> str | None:
    """What a statement did besides its SQL, which a replay of the SQL would not redo."""
    if agent:
        return "an agent function"
    if st.bind_texts:
        return "semantic SQL"
    if fts:
        return "full-text search (hatidata_context)"
    return "a write in an agent branch" if branch else None


def note_unrecorded(state: SavepointState, what: str) -> None:
    """A change in the block that cannot be recorded (hatiproxy_embed_column)."""
    state.writes += 1
    state.undoable.append(what)


def _size(value: Any) -> int:
    """Roughly the bytes a recorded parameter keeps alive."""
    if value is None:
        return 0
    if isinstance(value, (str, bytes, bytearray)):
        return 40 + len(value)
    if isinstance(value, (list, tuple)):
        return 56 + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return 64 + sum(_size(k) + _size(v) for k, v in value.items())
    nbytes = getattr(value, "nbytes", None)  # numpy arrays
    return 32 + nbytes if isinstance(nbytes, int) else 32
