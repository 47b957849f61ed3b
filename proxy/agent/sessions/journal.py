"""append_event's kind of the agent journal (proxy/agent/journal.py): an event is
acknowledged, with its seq, once it is in the fsynced log, and written to the session
(event row, temp: keys of an older invocation cleared, search index row) in the next
apply round.

The seq must be known at once, so the fast path needs each session's last seq: a
`Tail` is learned from every session transaction that knows it (create_session, an
append by the transaction path) and forgotten by any other (state changes, repair,
delete: the next append takes the transaction path and learns it again). While a session
transaction runs, its tail is held and appends to that session take the transaction
path, which first waits for the agent's journaled writes: the order of events and of
their effects holds. An event with a state_delta takes the transaction path too (its
keys' checks answer the caller).
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy.agent.sessions import search
from proxy.agent.sessions.tables import EVENTS, SESSIONS
from proxy.core.identity import Identity
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.journal import Journal

SessionKey = tuple[str, str, str]  # (org_id, agent_id, session_id)


@dataclass
class Tail:
    seq: int | None = None  # the session's last seq; None: unknown (transaction path)
    app_name: str = ""
    user_id: str = ""
    held: int = 0  # session transactions running
    learned: tuple[int | None, str, str] | None = None  # what the running one found


class EventKind:
    """The journaled appends of one Sessions service (service.py imports this module)."""

    name = "event"

    def __init__(self, sessions: Any, journal: Journal, write_event: Any) -> None:
        self.sessions = sessions
        self.journal = journal
        self.write_event = write_event  # rows.write_event
        self._mu = threading.Lock()
        self._tails: dict[SessionKey, Tail] = {}
        journal.register(self)

    # ---- what session transactions tell (main loop and workers) -------------------------

    def hold(self, key: SessionKey) -> None:
        """A transaction on this session starts: appends take the transaction path."""
        with self._mu:
            tail = self._tails.setdefault(key, Tail())
            tail.held += 1

    def learn(self, key: SessionKey, seq: int | None, app_name: str, user_id: str) -> None:
        """Inside the transaction: the session's last seq once it commits."""
        with self._mu:
            tail = self._tails.get(key)
            if tail is not None:
                tail.learned = (seq, app_name, user_id)

    def release(self, key: SessionKey, committed: bool) -> None:
        with self._mu:
            tail = self._tails[key]
            tail.held -= 1
            learned, tail.learned = tail.learned, None
            if committed and learned is not None:
                tail.seq, tail.app_name, tail.user_id = learned
            else:
                tail.seq = None
            if tail.seq is None and not tail.held:
                del self._tails[key]

    # ---- the fast path (any thread) -----------------------------------------------------

    def try_append(self, who: Identity, session_id: str, e: dict[str, Any]) -> dict | None:
        """Acknowledge a checked event through the log (returns once it is durable); None:
        the transaction path."""
        if e["delta"] or not self.journal.active:
            return None
        key = (who.org_id, who.agent_id, session_id)
        with self._mu:
            tail = self._tails.get(key)
            if tail is None or tail.held or tail.seq is None:
                return None
            now = dt.datetime.now(dt.UTC)
            row = {
                **{k: e[k] for k in ("event_id", "invocation", "author", "branch")},
                **{k: e[k] for k in ("message", "actions", "metadata")},
                "org": who.org_id,
                "agent": who.agent_id,
                "session": session_id,
                "seq": tail.seq + 1,
                "app": tail.app_name,
                "user": tail.user_id,
                "ts": now,
            }
            entry = self.journal.write(self.name, (who.org_id, who.agent_id), (row,))
            if entry is None:
                return None
            tail.seq += 1
        self.journal.durable(entry)
        return {
            "session_id": session_id,
            "seq": row["seq"],
            "event_id": e["event_id"],
            "timestamp": now,
        }

    # ---- the journal's side ---------------------------------------------------------------

    def encode(self, row: tuple[Any, ...]) -> Any:
        return {**row[0], "ts": row[0]["ts"].isoformat()}

    def decode(self, data: Any) -> tuple[Any, ...]:
        return ({**data, "ts": dt.datetime.fromisoformat(data["ts"])},)

    def replay(self, cur: duckdb.DuckDBPyConnection, rows: list[tuple[Any, ...]]) -> int:
        """Events not in the table whose session still exists (a deleted session's were
        removed from the log before the delete: this is for a crash in between)."""
        fresh = []
        for (r,) in rows:
            key = [r["org"], r["agent"], r["session"]]
            there = cur.execute(
                f"SELECT (SELECT count(*) FROM {SESSIONS} WHERE org_id = ? AND agent_id = ?"
                f" AND session_id = ?), (SELECT count(*) FROM {EVENTS} WHERE org_id = ?"
                " AND agent_id = ? AND session_id = ? AND seq = ?)",
                [*key, *key, r["seq"]],
            ).fetchone()
            if there == (1, 0):
                fresh.append(r)
        _write(cur, fresh, self.write_event)
        return len(fresh)

    async def apply(self, rows: list[tuple[Any, ...]]) -> None:
        events = [r for (r,) in rows]

        def work(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
            with search.ram_index.journal() as entries:
                _write(cur, events, self.write_event)
            return entries

        entries = await self.sessions.layer.db.transaction(work)
        self.sessions.index.committed(entries)  # the search index's RAM mirror follows
        self.sessions.index.poke()

    def applied(self, rows: list[tuple[Any, ...]]) -> None:
        pass


def _write(cur: duckdb.DuckDBPyConnection, events: list[dict[str, Any]], write_event: Any) -> None:
    """Write journaled events in order (each as the transaction path writes one without
    a state delta), then each session's updated_at."""
    last: dict[tuple[str, str, str], dt.datetime] = {}
    for r in events:
        who = Identity(r["org"], r["agent"])
        key = [r["org"], r["agent"], r["session"]]
        s = {"session_id": r["session"], "app_name": r["app"], "user_id": r["user"]}
        e = {
            **{k: r[k] for k in ("event_id", "invocation", "author", "branch")},
            **{k: r[k] for k in ("message", "actions", "metadata")},
            "delta": {},
        }
        write_event(cur, who, s, key, r["seq"], e, r["ts"])
        last[(r["org"], r["agent"], r["session"])] = r["ts"]
    for key, ts in last.items():
        cur.execute(
            f"UPDATE {target(SESSIONS)} SET updated_at = ? WHERE org_id = ? AND agent_id = ? "
            "AND session_id = ?",
            [ts, *key],
        )
