"""CREATE TEMP TABLE ... ON COMMIT DROP / DELETE ROWS: the action when a transaction ends.

DuckDB has no ON COMMIT clause (transpiler/on_commit.py takes it out). PostgreSQL drops the
table (DROP), or empties it (DELETE ROWS), as the transaction ends; outside a transaction
block the CREATE's own statement is that transaction (the table is gone at once). A
temporary table is the session's own, so the action is taken at the latest before this
session's next statement runs (`settle`): no statement can tell the difference. An explicit
COMMIT takes it in the transaction before committing (`before_commit`), as PostgreSQL does.

A transaction's end is seen without any hook on every path that ends one: outside a
block every statement is a transaction of its own; inside one (explicit, or an implicit
block of several statements) DuckDB's txid_current() changes from one to the next.
Emptying a table at every transaction end is exact whether the transaction committed or
rolled back (a rolled-back one's rows are gone anyway).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from transpiler import Statement


class TempOnCommit:
    """This session's temporary tables with an ON COMMIT action."""

    def __init__(self) -> None:
        self.tables: dict[str, str] = {}  # name -> "drop" | "delete rows"
        self.txid: int | None = None  # the transaction the last statement ran in


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _txid(cur: Any) -> int:
    return int(cur.execute("SELECT txid_current()").fetchone()[0])


def created(cur: Any, temps: TempOnCommit, on_commit: tuple[str, str], in_txn: bool) -> None:
    """A CREATE TEMP TABLE ... ON COMMIT ran (in a transaction block or not)."""
    action, name = on_commit
    temps.tables[name] = action
    temps.txid = _txid(cur) if in_txn else None


async def after_server_ddl(runner: StatementRunner, session: ClientSession, st: Statement) -> None:
    """A CREATE TEMP TABLE the server carried out itself (LIKE, FOREIGN KEYs) ran."""
    if st.on_commit is not None:
        in_txn = runner.txn_status != "I" or runner.implicit
        temps = session.temp_on_commit
        await runner.call(created, runner.cursor, temps, st.on_commit, in_txn)


def settle(cur: Any, temps: TempOnCommit, in_txn: bool) -> None:
    """Before a statement: the actions of the transactions that ended since the last one."""
    if not temps.tables:
        return
    if in_txn:
        txid = _txid(cur)
        if txid == temps.txid:
            return  # the same transaction as the last statement's
        temps.txid = txid
    else:
        temps.txid = None
    _act(cur, temps)


def before_commit(cur: Any, temps: TempOnCommit) -> None:
    """An explicit COMMIT: the actions in its transaction."""
    if temps.tables:
        _act(cur, temps)


def _act(cur: Any, temps: TempOnCommit) -> None:
    names = list(temps.tables)
    marks = ", ".join("?" for _ in names)
    rows = cur.execute(
        "SELECT lower(table_name), table_name FROM system.main.duckdb_tables() WHERE database_name = "
        f"'temp' AND lower(table_name) IN ({marks})",
        [n.lower() for n in names],
    ).fetchall()
    there = dict(rows)
    for name in names:
        action, actual = temps.tables[name], there.get(name.lower())
        if actual is None or action == "drop":
            del temps.tables[name]  # gone already (dropped, or its CREATE rolled back)
        if actual is not None:
            verb = "DROP TABLE" if action == "drop" else "DELETE FROM"
            cur.execute(f"{verb} temp.main.{_quoted(actual)}")
