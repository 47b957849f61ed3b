"""A session's rows on a cursor, inside the caller's transaction: one checked event
written with its state delta and index row, scoped state merged and applied, events
read back (service.py runs these in its transactions; journal.py replays write_event).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import duckdb

from proxy.agent.sessions import search
from proxy.agent.sessions.checks import dump, json_object, json_value, name
from proxy.agent.sessions.tables import CLOCK, EVENTS, SCOPED, SESSIONS, TEMP
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.db.agent_lake import lake_table
from proxy.db.agent_lake_views import is_shared, target

PREFIXES = ("app:", "user:", "temp:")
EVENT_COLUMNS = (
    "session_id",
    "seq",
    "event_id",
    "invocation_id",
    "author",
    "branch",
    "message",
    "actions",
    "metadata",
    "timestamp",
)


def checked_event(event: dict[str, Any]) -> dict[str, Any]:
    """One event's fields, checked (AgentError 22023 when one is wrong)."""
    if not isinstance(event, dict):
        raise AgentError.invalid("an event must be an object with author, message, ...")
    actions = json_object("actions", event.get("actions"))
    invocation = event.get("invocation_id")
    branch = event.get("branch")
    event_id = event.get("event_id")
    return {
        "author": name("author", event.get("author")),
        "message": json_value("message", event.get("message")),
        "actions": actions,
        "metadata": json_object("metadata", event.get("metadata")),
        "delta": json_object("actions.state_delta", actions.get("state_delta")),
        "invocation": name("invocation_id", invocation) if invocation else None,
        "branch": name("branch", branch) if branch else None,
        "event_id": name("event_id", event_id) if event_id else str(uuid.uuid4()),
    }


def write_event(
    cur: duckdb.DuckDBPyConnection,
    who: Identity,
    s: dict[str, Any] | None,
    key: list[str],
    seq: int,
    e: dict[str, Any],
    now: dt.datetime,
) -> dict[str, Any]:
    """Insert one checked event at `seq`, apply its state delta and index it."""
    if e["invocation"] is not None:  # a new invocation: the last one's temp: keys end
        cur.execute(
            f"DELETE FROM {target(TEMP)} WHERE org_id = ? AND agent_id = ? AND session_id = ? "
            "AND invocation_id <> ?",
            [*key, e["invocation"]],
        )
    row = [*key, seq, e["event_id"], e["invocation"], e["author"], e["branch"]]
    row += [dump(e["message"]), dump(e["actions"]), dump(e["metadata"]), now]
    cur.execute(
        f"INSERT INTO {target(EVENTS)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::JSON, ?::JSON, ?::JSON, ?)",
        row,
    )
    apply_delta(cur, who, s, e["invocation"], e["delta"])
    search.index_event(
        cur,
        who,
        s,
        {
            "seq": seq,
            "event_id": e["event_id"],
            "author": e["author"],
            "timestamp": now,
            "message": e["message"],
            "actions": e["actions"],
        },
    )
    return {"session_id": key[2], "seq": seq, "event_id": e["event_id"], "timestamp": now}


# -- helpers (run on a cursor inside the caller's transaction) -----------------------------


def session_row(
    cur: duckdb.DuckDBPyConnection, who: Identity, session_id: str, required: bool = True
) -> dict[str, Any] | None:
    row = cur.execute(
        f"SELECT session_id, app_name, user_id, state, created_at, updated_at FROM {SESSIONS} "
        "WHERE org_id = ? AND agent_id = ? AND session_id = ?",
        [who.org_id, who.agent_id, session_id],
    ).fetchone()
    if row is None:
        if required:
            raise AgentError.not_found(f"no session {session_id!r}")
        return None
    cols = ("session_id", "app_name", "user_id", "state", "created_at", "updated_at")
    out = dict(zip(cols, row, strict=True))
    out["state"] = json.loads(out["state"])
    return out


def scope_of(key: str) -> str:
    for prefix in PREFIXES:
        if key.startswith(prefix):
            return prefix[:-1]
    return "session"


def apply_delta(
    cur: duckdb.DuckDBPyConnection,
    who: Identity,
    session: dict[str, Any],
    invocation: str | None,
    delta: dict[str, Any],
) -> None:
    """Write each key of `delta` to its scope; a JSON null value deletes the key."""
    owner = [who.org_id, who.agent_id]
    plain: dict[str, Any] = {}
    for key, value in delta.items():
        name("state key", key)
        scope = scope_of(key)
        if scope == "session":
            plain[key] = value
            continue
        if scope == "temp":
            if invocation is None:
                raise AgentError.invalid(f"{key}: a temp: key needs an invocation_id")
            table, where = TEMP, [session["session_id"]]
            cols = "session_id = ?"
            args = [*owner, session["session_id"], invocation, key, dump(value)]
        else:
            bump_clock(cur)  # user:/app: keys are shared by sessions other proxies write
            user = session["user_id"] if scope == "user" else ""
            table, where = SCOPED, [session["app_name"], user]
            cols = "app_name = ? AND user_id = ?"
            args = [*owner, session["app_name"], user, key, dump(value)]
        # DELETE then INSERT, not INSERT OR REPLACE: a lake table has no key to replace on
        cur.execute(
            f"DELETE FROM {target(table)} WHERE org_id = ? AND agent_id = ? AND {cols} AND key = ?",
            [*owner, *where, key],
        )
        if value is not None:
            cur.execute(f"INSERT INTO {target(table)} VALUES (?, ?, ?, ?, ?, ?::JSON)", args)
    if plain:
        state = {**session["state"], **plain}
        state = {k: v for k, v in state.items() if v is not None}
        session["state"] = state
        cur.execute(
            f"UPDATE {target(SESSIONS)} SET state = ?::JSON WHERE org_id = ? AND agent_id = ? "
            "AND session_id = ?",
            [dump(state), *owner, session["session_id"]],
        )


def bump_clock(cur: duckdb.DuckDBPyConnection) -> None:
    """In the lake: update the one clock row, so that this transaction conflicts with any
    other proxy's doing the same (two creates of one session id, two first writes of one
    user:/app: key: inserts alone would not conflict in a DuckLake, which has no keys)."""
    if is_shared(SESSIONS):
        cur.execute(f"UPDATE {lake_table(CLOCK)} SET n = n + 1")


def delete_counted(cur: duckdb.DuckDBPyConnection, table: str, where: str, args: list[Any]) -> int:
    """DELETE the rows of `table` matching `where`; how many (no RETURNING in a lake)."""
    (n,) = cur.execute(f"SELECT count(*) FROM {table} {where}", args).fetchone()
    if n:
        cur.execute(f"DELETE FROM {target(table)} {where}", args)
    return int(n)


def merged_state(cur: duckdb.DuckDBPyConnection, who: Identity, s: dict[str, Any]) -> dict:
    """The state a session sees: its own keys, its user's and app's, the live temp: keys."""
    out = dict(s["state"])
    rows = cur.execute(
        f"SELECT key, value FROM {SCOPED} WHERE org_id = ? AND agent_id = ? AND app_name = ? "
        "AND user_id IN ('', ?) "
        f"UNION ALL SELECT key, value FROM {TEMP} WHERE org_id = ? AND agent_id = ? "
        "AND session_id = ?",
        [who.org_id, who.agent_id, s["app_name"], s["user_id"]]
        + [who.org_id, who.agent_id, s["session_id"]],
    ).fetchall()
    for key, value in rows:
        out[key] = json.loads(value)
    return dict(sorted(out.items()))


def session_events(
    cur: duckdb.DuckDBPyConnection,
    who: Identity,
    session_id: str,
    last_n: int | None = None,
    after: Any = None,
) -> list[dict[str, Any]]:
    sql = f"SELECT {', '.join(EVENT_COLUMNS)} FROM {EVENTS} "
    sql += "WHERE org_id = ? AND agent_id = ? AND session_id = ?"
    args: list[Any] = [who.org_id, who.agent_id, session_id]
    if after is not None:
        sql += " AND timestamp > ?"
        args.append(after)
    if last_n is not None:
        sql = f"SELECT * FROM ({sql} ORDER BY seq DESC LIMIT ?) ORDER BY seq"
        args.append(last_n)
    else:
        sql += " ORDER BY seq"
    out = []
    for row in cur.execute(sql, args).fetchall():
        e = dict(zip(EVENT_COLUMNS, row, strict=True))
        for col in ("message", "actions", "metadata"):
            e[col] = json.loads(e[col]) if e[col] is not None else None
        out.append(e)
    return out
