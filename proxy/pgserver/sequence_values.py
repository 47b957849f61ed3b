"""This session's currval / lastval, as PostgreSQL keeps them.

DuckDB's currval is the sequence's last value whoever drew it (another session's insert
included) and DuckDB has no lastval. The server learns what each statement of the session
drew and keeps it here (`SessionSequences`); currval('s') and lastval() calls are then
replaced by those values before the statement runs (transpiler/sequence_draws.py), and
55000 is raised as PostgreSQL does before the session drew one.

A statement's draws are read on the worker thread around its run (`run`):

- an INSERT ... VALUES / DEFAULT VALUES without ON CONFLICT whose drawing columns are
  plain `DEFAULT nextval('s')` reads the values from its own rows: RETURNING those
  columns (added when the client asked none; its rows are not sent then). Exact beside
  any concurrent writer; a single-row INSERT runs ~11% more instructions
  (bench/instr_ab.py --kind serial_insert: 1.54M -> 1.71M on its thread); so does a
  FROM-less `SELECT nextval('s')` (Hibernate's), from its own row;
- an INSERT (columns) SELECT ... (or INSERT ... VALUES ... ON CONFLICT, whose conflicting
  rows draw too) draws once per row from each sequence of a column it does not list: the
  sequences' last values after it, read while no other session of the server may draw
  from them (proxy/db/sequence_gate.py), are its own (one DuckDB currval query: a
  single-row INSERT ... SELECT runs ~34% more instructions, 1.47M -> 1.97M);
- any other statement that may draw (an explicit nextval inside an expression, UPDATE ...
  SET DEFAULT, MERGE) reads the sequences' last values before and after it under that
  gate; its rows are read whole first (a streamed result draws as it is fetched).

Those read around a statement hold the other sessions' writers of the same sequences
until they end (a bulk INSERT ... SELECT, the single-row inserts beside it).

Sequences are named by schema and name; a name the session resolves to several schemas
takes main's (PostgreSQL follows the search_path). Values are kept across ROLLBACK (a
sequence is not transactional) and forgotten by DISCARD SEQUENCES / DISCARD ALL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb

from proxy.db.sequence_gate import GATE
from proxy.wire.errors import PgError
from transpiler import Statement, sequence_draws

SeqKey = tuple[str, str]  # (schema, name), lower case


class SessionSequences:
    """The values this session's nextval calls (and setval) last gave, per sequence."""

    def __init__(self) -> None:
        self.values: dict[SeqKey, int] = {}
        self.last: SeqKey | None = None
        self._seen: dict[SeqKey, int] = {}  # the DDL count when the sequence was last seen

    def drew(self, key: SeqKey, value: int, last: bool = True) -> None:
        self.values[key] = value
        self._seen[key] = _DDL[0]
        if last:
            self.last = key

    def discard(self) -> None:
        self.values.clear()
        self.last = None

    def currval(self, text: str, cur: Any = None) -> int:
        """currval(text) for this session; 55000 before it drew from the sequence, 42P01
        when there is no such sequence (looked up on `cur` when DDL ran since it was
        seen: a sequence dropped meanwhile)."""
        name = sequence_draws.sequence_name(text)
        dotted = text.replace("''", "'").rsplit(".", 1)
        schema = dotted[0].strip().strip('"').lower() if len(dotted) == 2 else None
        schema = "main" if schema == "public" else schema
        found = [k for k in self.values if k[1] == name and (schema is None or k[0] == schema)]
        key = ([k for k in found if k[0] == "main"] or found or [(schema or "", name)])[0]
        if cur is not None and (key not in found or self._seen.get(key) != _DDL[0]):
            there = cur.execute(
                "SELECT count(*) FROM system.main.duckdb_sequences() WHERE lower(sequence_name) = ? "
                "AND (? IS NULL OR lower(schema_name) = ?)",
                [name.lower(), schema, schema],
            ).fetchone()[0]
            if not there:
                self.values.pop(key, None)
                raise PgError("42P01", f'relation "{name}" does not exist')
            self._seen[key] = _DDL[0]
        if key in found:
            return self.values[key]
        raise PgError("55000", f'currval of sequence "{name}" is not yet defined in this session')

    def lastval(self) -> int:
        if self.last is None or self.last not in self.values:
            raise PgError("55000", "lastval is not yet defined in this session")
        return self.values[self.last]


def note_setval(seqs: SessionSequences, rows: list[tuple[Any, ...]]) -> None:
    """setval(name, value[, is_called]) ran with these arguments: one called sets this
    session's currval (not lastval), as in PostgreSQL."""
    for row in rows:
        name, value = row[0], row[1]
        called = True if len(row) < 3 else row[2]
        if name is None or value is None or not called:
            continue
        text = str(name)
        dotted = text.rsplit(".", 1)
        schema = dotted[0].strip('"').lower() if len(dotted) == 2 else "main"
        seqs.drew(
            ("main" if schema == "public" else schema, sequence_draws.sequence_name(text)),
            int(value),
            last=False,
        )


@dataclass(frozen=True, slots=True)
class _Table:
    """A table's columns in order and the sequences its defaults draw from."""

    columns: tuple[str, ...]
    serial: dict[str, SeqKey]  # column -> sequence of its plain `nextval('s')` default
    other: tuple[SeqKey, ...]  # sequences other default expressions draw from


# (schema or None, table) -> the tables DuckDB holds under that name (several schemas or
# databases: temp's and main's). Dropped whole at any DDL (`forget_tables`); a name not
# found is never kept (it may be made in a transaction not yet committed).
_TABLES: dict[tuple[str | None, str], list[_Table]] = {}
_TABLES_LOCK = threading.Lock()
# Statement text -> where it draws (None: nowhere); bounded like the transpile cache.
_DRAWS: dict[str, sequence_draws.Draws | None] = {}
_MAX = 4096


_DDL = [0]  # DDL statements run so far (any session): a sequence seen before may be gone


def forget_tables() -> None:
    """A DDL statement ran: column defaults may have changed, sequences been dropped."""
    _DDL[0] += 1
    with _TABLES_LOCK:
        _TABLES.clear()


def _draws(sql: str) -> sequence_draws.Draws | None:
    if sql in _DRAWS:
        return _DRAWS[sql]
    found = sequence_draws.draws(sql)
    if len(_DRAWS) >= _MAX:
        _DRAWS.clear()
    _DRAWS[sql] = found
    return found


def _default_sequence(default: str) -> str | None:
    """'s' of a default that is exactly nextval('s') (DuckDB's text of it)."""
    text = default.strip()
    if text.lower().startswith("nextval('") and text.endswith("')") and text.count("'") == 2:
        return text[len("nextval('") : -2]
    return None


def _key(schema: str, text: str) -> SeqKey:
    """A nextval argument of a default of a table in `schema`, as a key (an unqualified
    name is looked up along the search path when the default runs: main's)."""
    parts = text.rsplit(".", 1)
    seq_schema = parts[0].strip('"').lower() if len(parts) == 2 else "main"
    return (seq_schema, sequence_draws.sequence_name(text))


def _tables(cur: Any, target: tuple[str | None, str]) -> list[_Table]:
    with _TABLES_LOCK:
        known = _TABLES.get(target)
    if known is not None:
        return known
    schema, table = target
    rows = cur.execute(
        "SELECT database_name, schema_name, column_name, column_default FROM system.main.duckdb_columns()"
        " WHERE lower(table_name) = ? AND (? IS NULL OR lower(schema_name) = ?)"
        " ORDER BY database_name, schema_name, column_index",
        [table, schema, schema],
    ).fetchall()
    grouped: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for db, sch, col, default in rows:
        grouped.setdefault((db, sch), []).append((col, default))
    found = []
    for (_, sch), cols in grouped.items():
        serial, other = {}, []
        for col, default in cols:
            if default is None or "nextval" not in default.lower():
                continue
            plain = _default_sequence(default)
            if plain is not None:
                serial[col.lower()] = _key(sch, plain)
            else:
                other += [_key(sch, n) for n in sequence_draws.draws(f"SELECT {default}").named]
        found.append(_Table(tuple(c.lower() for c, _ in cols), serial, tuple(other)))
    if found:
        with _TABLES_LOCK:
            if len(_TABLES) >= _MAX:
                _TABLES.clear()
            _TABLES[target] = found
    return found


@dataclass(frozen=True, slots=True)
class DrawPlan:
    """How one statement's draws are read (see the module's doc)."""

    sql: str  # what runs (RETURNING added when `hidden`)
    keys: frozenset[str]  # sequence names, for the gate
    exclusive: bool  # read before and after (else: from the rows)
    picks: tuple[tuple[int, SeqKey], ...] = ()  # (row position, sequence) of drawn values
    hidden: bool = False  # the RETURNING rows are the server's, not the client's
    negative: frozenset[SeqKey] = frozenset()  # sequences counting down
    # exclusive, every written row drew once from each of these: only their currval after
    # it is read (when it wrote rows), not their values before
    after: tuple[SeqKey, ...] = ()
    surely: bool = False  # `after`, drawn even when no row is written (ON CONFLICT)


# Statement text -> (the DDL count then, its DrawPlan): a repeated statement (prepared)
# pays one lookup until DDL may have changed a default or a sequence.
_PLANS: dict[str, tuple[int, DrawPlan | None]] = {}


def plan(cur: Any, sql: str, st: Statement) -> DrawPlan | None:
    """How `sql` (about to run on `cur`) has its draws read; None: it draws none."""
    if st.draws is None and "nextval" not in sql.lower():
        return None  # (no dict entry for the many statements that draw nowhere)
    known = _PLANS.get(sql)
    if known is not None and known[0] == _DDL[0]:
        return known[1]
    generation = _DDL[0]
    made, keep = _plan(cur, sql, st)
    if keep:  # (not when its table was not found: made in a transaction not committed yet)
        if len(_PLANS) >= _MAX:
            _PLANS.clear()
        _PLANS[sql] = (generation, made)
    return made


def _plan(cur: Any, sql: str, st: Statement) -> tuple[DrawPlan | None, bool]:
    draws = st.draws if st.kind in sequence_draws.KINDS else None
    if draws is None and "nextval" in sql.lower():  # DDL, EXPLAIN, a text run as written
        draws = _draws(sql)
    if draws is None:
        return None, True
    tables = _tables(cur, draws.target) if draws.target is not None and draws.defaults else []
    return _made(cur, sql, draws, tables), bool(tables) or not draws.defaults


def _made(cur: Any, sql: str, draws: sequence_draws.Draws, tables: list[_Table]) -> DrawPlan | None:
    """The plan for `draws` of `sql` into `tables` (see the module's doc)."""
    named = {(None, n) for n in draws.named}
    seqs: set[tuple[str | None, str]] = set(named)
    for t in tables:
        seqs.update(t.serial.values())
        seqs.update(t.other)
    if not seqs:
        return None
    keys = frozenset(name for _, name in seqs)
    if draws.selected:  # `SELECT nextval('s')`: the values are its columns
        picked = tuple((at, _key("main", text)) for at, text in draws.selected)
        negative = frozenset(k for _, k in picked if _counts_down(cur, k))
        return DrawPlan(sql, keys, False, picked, False, negative)
    if draws.per_row and len(tables) == 1 and not tables[0].other:
        after = tuple(k for c, k in tables[0].serial.items() if c not in (draws.values or ()))
        if not after:
            return None
        return DrawPlan(sql, keys, exclusive=True, after=after, surely=draws.surely)
    fast = _from_rows(draws, tables)
    if fast is None:
        return DrawPlan(sql, keys, exclusive=True)
    picks, drawn = fast
    if not picks:
        return None  # every drawing column given: nothing drawn
    hidden = draws.returning is None
    run_sql = sql
    if hidden:
        columns = tuple(c for c, _ in picks)
        run_sql = sequence_draws.with_returning(sql, list(columns))
        positions = tuple((i, key) for i, (_, key) in enumerate(picks))
    else:
        positions = tuple(p for p in drawn if p is not None)
        if len(positions) != len(picks):
            return DrawPlan(sql, keys, exclusive=True)  # a drawn column not returned
    negative = frozenset(k for _, k in positions if _counts_down(cur, k))
    return DrawPlan(run_sql, keys, False, positions, hidden, negative)


def _from_rows(
    draws: sequence_draws.Draws, tables: list[_Table]
) -> tuple[list[tuple[str, SeqKey]], list[tuple[int, SeqKey] | None]] | None:
    """An INSERT whose draws its rows show: the drawing (column, sequence) pairs, and for
    each the position of the column in the client's RETURNING (None: not there)."""
    if not draws.plain_values or len(tables) != 1 or tables[0].other or draws.named:
        return None
    table = tables[0]
    given = draws.values if draws.values is not None else table.columns[: draws.width]
    picks = [(c, k) for c, k in table.serial.items() if c not in given]
    positions: dict[str, int] = {}  # column -> its place in the client's RETURNING
    at = 0
    for item in draws.returning or ():
        for column in table.columns if item == "*" else (item,):
            if column is not None:
                positions.setdefault(column, at)
            at += 1
    drawn = [(positions[c], k) if c in positions else None for c, k in picks]
    return picks, drawn


_INCREMENTS: dict[SeqKey, bool] = {}


def _counts_down(cur: Any, key: SeqKey) -> bool:
    if key not in _INCREMENTS:
        row = cur.execute(
            "SELECT increment_by < 0 FROM system.main.duckdb_sequences() WHERE lower(schema_name) = ? "
            "AND lower(sequence_name) = ? LIMIT 1",
            list(key),
        ).fetchone()
        if row is None:
            return False
        _INCREMENTS[key] = bool(row[0])
    return _INCREMENTS[key]


def _last_values(cur: Any, keys: frozenset[str]) -> dict[SeqKey, int | None]:
    names = sorted(keys)
    marks = ", ".join("?" for _ in names)
    rows = cur.execute(
        "SELECT lower(schema_name), lower(sequence_name), last_value FROM system.main.duckdb_sequences()"
        f" WHERE lower(sequence_name) IN ({marks})",
        names,
    ).fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


Outcome = tuple[Any, int | None, list[tuple] | None]


def run(
    draw: DrawPlan,
    seqs: SessionSequences,
    cur: Any,
    execute: Callable[[str], None],
    finish: Callable[[bool], Outcome],
) -> Outcome:
    """Run the statement (`execute(sql)`, then `finish(whole)` reads its result, whole
    when asked) and keep what it drew in `seqs`."""
    if not draw.exclusive:
        with GATE.shared(draw.keys):
            execute(draw.sql)
            if draw.hidden:
                rows = cur.fetchall()
                outcome: Outcome = (None, len(rows), None)
            else:
                outcome = finish(True)
                rows = outcome[2] or []
        _keep_rows(draw, seqs, rows)
        return outcome
    if draw.after:
        with GATE.exclusive(draw.keys):
            execute(draw.sql)
            outcome = finish(True)
            if draw.surely or (outcome[1] if outcome[0] is None else outcome[2]):
                for key, value in _currvals(cur, draw.after).items():
                    seqs.drew(key, value)
        return outcome
    with GATE.exclusive(draw.keys):
        before = _last_values(cur, draw.keys)
        try:
            execute(draw.sql)
            return finish(True)
        finally:
            try:
                after = _last_values(cur, draw.keys)
            except Exception:  # the statement failed its transaction: nothing to read
                after = before
            for key, value in after.items():
                if value is not None and value != before.get(key):
                    seqs.drew(key, value)


def _currvals(cur: Any, keys: tuple[SeqKey, ...]) -> dict[SeqKey, int]:
    """DuckDB's currval of sequences this statement just drew from, under the gate: its
    own values. (DuckDB's currval fails once a sequence is made again, which a session's
    open transaction never sees; outside one the read fails alone and nothing is kept.)"""
    calls = ", ".join(
        "currval('"
        + ".".join('"' + p.replace('"', '""') + '"' for p in k).replace("'", "''")
        + "')"
        for k in keys
    )
    try:
        row = cur.execute(f"SELECT {calls}").fetchone()
    except duckdb.Error:
        return {}
    return dict(zip(keys, row, strict=True))


def _keep_rows(draw: DrawPlan, seqs: SessionSequences, rows: list[tuple]) -> None:
    for at, key in draw.picks:
        values = [r[at] for r in rows if r[at] is not None]
        if values:
            seqs.drew(key, min(values) if key in draw.negative else max(values))
