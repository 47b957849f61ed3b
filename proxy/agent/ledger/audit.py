"""Whole-ledger verification (`verify_ledger`): the organisation chain, then every session.

One read transaction (one snapshot) of the organisation's chain, its head, its session
records and its steps; then, without I/O:

1. the organisation chain (`check_org_chain`): seq numbers without gaps, each entry's
   org_hash over its fields, each `prev_org_hash` linking to the entry before, the
   stored head (`cot_org_heads`) at the chain's end, and the head this server last wrote
   (`Ledger.org_heads`) still in the chain;
2. every session any of the tables names (session records, steps, organisation chain
   entries): its own chain (`verify.verify_steps`) and the organisation chain's record
   of it (`verify.check_org`), so a session deleted with its record, a session's
   missing last steps and a forged session inserted with valid hashes are all reported.

Each problem is one row (kind, session, step, seq, reason); a last row of kind
`summary` always follows. A caller without `cot:admin` sees its own agent's sessions,
and breaks of the organisation chain without the other agents' names.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.ledger import orgchain
from proxy.agent.ledger.hashing import GENESIS_HASH
from proxy.agent.ledger.schema import SESSIONS, STEP_COLUMNS, TRACES, is_admin
from proxy.agent.ledger.verify import check_org, decode_step, verify_steps
from proxy.core.identity import Identity

if TYPE_CHECKING:
    from proxy.agent.ledger.service import Ledger

COLUMNS = [
    ("kind", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("step_index", "BIGINT"),
    ("seq", "BIGINT"),
    ("trace_id", "UUID"),
    ("reason", "VARCHAR"),
    ("ledger_valid", "BOOLEAN"),
    ("sessions_checked", "BIGINT"),
    ("steps_checked", "BIGINT"),
    ("org_chain_length", "BIGINT"),
    ("org_head_hash", "VARCHAR"),
]


def _problem(kind: str, reason: str, **where: Any) -> dict[str, Any]:
    row = {"kind": kind, "session_id": None, "agent_id": None, "step_index": None}
    row.update({"seq": None, "trace_id": None, "reason": reason})
    row.update(where)
    return row


def check_org_chain(
    entries: list[dict[str, Any]],
    stored_head: tuple[int, str] | None,
    known_head: tuple[int, str] | None,
) -> tuple[list[dict[str, Any]], int, str]:
    """Problems of one organisation's chain (entries in seq order); also (length, head)."""
    out: list[dict[str, Any]] = []
    expected, prev = 0, GENESIS_HASH
    for e in entries:
        seq = e["seq"]
        where = {
            "seq": seq,
            "session_id": e["session_id"],
            "agent_id": e["agent_id"],
            "step_index": e["step_index"],
            "trace_id": e["trace_id"],
        }
        if seq > expected:
            gap = f"entry {expected}" if seq == expected + 1 else f"entries {expected} to {seq - 1}"
            out.append(
                _problem(
                    "org_chain",
                    f"organisation chain {gap} missing (next stored: seq {seq}): "
                    "steps and their entries were deleted",
                    seq=expected,
                )
            )
        elif e["prev_org_hash"] != prev:
            out.append(
                _problem(
                    "org_chain",
                    f"organisation chain seq {seq}: prev_org_hash does not link to the entry "
                    "before it",
                    **where,
                )
            )
        e["intact"] = orgchain.entry_hash(e) == e["org_hash"]  # check_org reuses it
        if not e["intact"]:
            out.append(
                _problem("org_chain", f"organisation chain seq {seq}: entry altered", **where)
            )
        expected, prev = seq + 1, e["org_hash"]
    if stored_head is None:
        if entries:
            out.append(_problem("org_head", "the organisation chain's head record is missing"))
    elif stored_head[0] != expected:
        lost = stored_head[0] > expected
        out.append(
            _problem(
                "org_head",
                f"the organisation head records {stored_head[0]} entries, the chain holds "
                f"{expected}" + (": entries at its tail were deleted" if lost else ""),
                seq=min(stored_head[0], expected),
            )
        )
    elif stored_head[1] != prev:
        out.append(
            _problem(
                "org_head",
                "the organisation head's hash is not the chain's last entry's",
                seq=expected - 1,
            )
        )
    if known_head is not None and known_head[0] > 0:
        last = known_head[0] - 1
        held = next((e for e in entries if e["seq"] == last), None)
        if held is None or held["org_hash"] != known_head[1]:
            out.append(
                _problem(
                    "org_head",
                    f"the organisation chain no longer holds the head this server wrote "
                    f"(seq {last}, {known_head[1][:16]}...): its tail was removed or rewritten",
                    seq=last,
                )
            )
    return out, expected, prev


def _read(cur: duckdb.DuckDBPyConnection, org: str, agent: str | None):
    only = "" if agent is None else " AND agent_id = ?"
    args: list[Any] = [org] if agent is None else [org, agent]
    res = cur.execute(
        f"SELECT {STEP_COLUMNS} FROM {TRACES} WHERE org_id = ?{only} "
        "ORDER BY agent_id, session_id, step_index",
        args,
    )
    names = [d[0] for d in res.description]
    steps = [dict(zip(names, r, strict=True)) for r in res.fetchall()]
    heads = cur.execute(
        f"SELECT agent_id, session_id, total_steps, head_hash FROM {SESSIONS} "
        f"WHERE org_id = ?{only}",
        args,
    ).fetchall()
    return steps, heads, orgchain.all_entries(cur, org), orgchain.read_head(cur, org)


async def verify_ledger(ledger: Ledger, who: Identity) -> list[dict[str, Any]]:
    """Problem rows, then the summary row (see the module docstring)."""
    org = who.org_id
    agent = None if is_admin(who) else who.agent_id
    known = ledger.org_heads.get(org)  # before the snapshot: appends only move it on
    steps, heads, entries, stored_head = await ledger.layer.db.transaction(
        lambda cur: _read(cur, org, agent)
    )
    # Hashing a large ledger takes seconds: off the event loop the other interfaces run on.
    return await asyncio.to_thread(_check, agent, known, steps, heads, entries, stored_head)


def _check(
    agent: str | None,
    known: tuple[int, str] | None,
    steps: list[dict[str, Any]],
    heads: list[tuple],
    entries: list[dict[str, Any]],
    stored_head: tuple[int, str] | None,
) -> list[dict[str, Any]]:
    problems, length, head_hash = check_org_chain(entries, stored_head, known)
    if agent is not None:  # other agents' names stay hidden
        for p in problems:
            if p["agent_id"] not in (None, agent):
                p.update(session_id=None, agent_id=None, step_index=None, trace_id=None)
    by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for s in steps:
        by_session.setdefault((s["agent_id"], s["session_id"]), []).append(decode_step(s))
    recorded: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in entries:
        if agent is None or e["agent_id"] == agent:
            recorded.setdefault((e["agent_id"], e["session_id"]), []).append(e)
    records = {(a, s): {"total_steps": n, "head_hash": h} for a, s, n, h in heads}
    sessions = sorted(set(by_session) | set(recorded) | set(records))
    for key in sessions:
        rows, mine = by_session.get(key, []), recorded.get(key, [])
        result = verify_steps(rows, records.get(key))
        check_org(result, rows, mine)
        seq_of = {e["step_index"]: e["seq"] for e in mine}
        for bad in result.invalid_hashes:
            problems.append(
                _problem(
                    bad["field"],
                    bad["problem"],
                    session_id=key[1],
                    agent_id=key[0],
                    step_index=bad["step_index"],
                    seq=seq_of.get(bad["step_index"]),
                    trace_id=bad["trace_id"],
                )
            )
    broken = {(p["agent_id"], p["session_id"]) for p in problems if p["session_id"]}
    valid = not problems
    summary = (
        f"ledger valid: {len(sessions)} session(s), {len(steps)} step(s), organisation chain "
        f"of {length} entries"
        if valid
        else f"{len(problems)} problem(s) in {len(broken)} of {len(sessions)} session(s)"
        + (
            " and in the organisation chain"
            if any(p["session_id"] is None for p in problems)
            else ""
        )
    )
    totals = {
        "ledger_valid": valid,
        "sessions_checked": len(sessions),
        "steps_checked": len(steps),
        "org_chain_length": length,
        "org_head_hash": head_hash,
    }
    return [{**p, **totals} for p in problems] + [{**_problem("summary", summary), **totals}]
