"""`process_memories`: a conversation turn in, the memory events it caused out.

Each fact of the turn is ADD (stored as a new memory), UPDATE (stored, and the current
memory it corrects retired: conflict_status 'superseded', superseded_by_id = the new
one) or NOOP (already known; nothing written, memory_id is the known memory). Only the
caller's own current memories are compared and retired, never another agent's.

Deciding: with `summary_llm_url` configured, one call to that OpenAI-compatible
endpoint (proxy/core/llm.py) gets the turn and the caller's candidate memories and
answers the facts with their events (method `llm:<model>`). Without an endpoint, or
when its answer is unusable (not JSON of the asked shape, an unknown id, the endpoint
down), the local rule decides (method `local`; the note says why the LLM was not used).
The local rule (facts.py for the text part; docs/memory.md "Corrections"):

- candidates: the agent's current memories sharing a subject word or predicate class
  with the fact (SQL, newest first), and its CANDIDATES nearest by embedding;
- NOOP when a candidate has the same words (fillers aside), or cosine >= NOOP_SIM and
  the fact adds no word to it, or it has the same subject and the same value;
- UPDATE when a candidate has the same subject (equal subject keys, or the same first
  word and subject-phrase cosine >= SUBJECT_SIM) and a different value: the closest such
  candidate (equal key counts as 1.0, ties: the newest) is superseded;
- ADD otherwise.

The facts of one call are decided and stored in order, one agent's calls one at a time.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.agent.context import KeyedLocks
from proxy.agent.memory import facts as F
from proxy.agent.memory.args import content_hash
from proxy.agent.memory.index_types import RowFilter
from proxy.agent.memory.schema import T_MEM
from proxy.agent.memory.search import nearest
from proxy.agent.memory.service import LIVE, Memory
from proxy.agent.memory.store import check_item, memory_of, store_items
from proxy.core import llm
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

NOOP_SIM = 0.95  # whole-fact cosine of a repeat (with no new word)
SUBJECT_SIM = 0.85  # subject-phrase cosine of the same subject said otherwise
CANDIDATES = 10  # nearest memories by embedding, per fact
SQL_CANDIDATES = 50  # memories sharing a subject word, per fact
LLM_CANDIDATES = 30  # memories shown to the LLM
LLM_TIMEOUT_S = 60

COLUMNS = (
    ("event", "VARCHAR"),
    ("memory_id", "UUID"),
    ("content", "VARCHAR"),
    ("superseded_id", "UUID"),
    ("previous_content", "VARCHAR"),
    ("similarity", "DOUBLE"),
    ("method", "VARCHAR"),
    ("note", "VARCHAR"),
)
PROMPT = (
    "You keep an assistant's long-term memory of the user. From the conversation turn, "
    "take the durable facts the user states, each one short self-contained sentence. "
    "Compare each with the existing memories and decide: ADD (new information), UPDATE "
    "(it corrects or replaces an existing memory: give that memory's id) or NOOP (an "
    "existing memory already says it: give its id). Answer with JSON only: "
    '{"facts": [{"fact": "...", "event": "ADD|UPDATE|NOOP", "id": "m1 or null"}]}. '
    'Use only ids from the list. No facts: {"facts": []}.'
)
_LOCKS = KeyedLocks()  # one process_memories call per agent at a time
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


@dataclass(frozen=True)
class Known:
    """A current memory of the caller, a candidate to compare a fact with."""

    memory_id: str
    content: str
    created: float
    split: F.Split


@dataclass
class Decision:
    event: str
    fact: str
    target: Known | None = None
    similarity: float | None = None


def _search_words(sp: F.Split) -> list[str]:
    """Words whose presence makes a memory a candidate: the subject's content stems,
    and for a predicate class the stems of all its phrases."""
    out: list[str] = []
    for k in sp.key or sp.words:
        if k in F.PREDICATE_CLASSES:
            out += [p[0] for p in F.PREDICATE_CLASSES[k]]
        elif k not in F.PRONOUNS and k not in F.PREPOSITIONS and len(k) > 2:
            out.append(k)
    return list(dict.fromkeys(out))


async def candidates(mem: Memory, who: Identity, fact: str) -> tuple[list[Known], dict[str, float]]:
    """The caller's current memories to compare `fact` with, and their cosine to it."""
    sp = F.split(fact)
    words = _search_words(sp)
    sims: dict[str, float] = {}
    vec_ids: list[str] = []
    worker = mem.layer.semantic.worker
    vectors = mem.index.agent(who.org_id, who.agent_id)
    if worker is not None and vectors is not None and len(vectors):
        qvec = np.asarray((await worker.embed_now([fact], "passage"))[0], dtype=np.float32)
        qvec /= np.linalg.norm(qvec) or 1.0
        hits = nearest([vectors], qvec, CANDIDATES, None, RowFilter(now=time.time()))
        sims = dict(zip(hits.ids.tolist(), (float(s) for s in hits.sims), strict=True))
        vec_ids = list(sims)

    def q(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
        hit = " OR ".join(["contains(lower(content), ?)"] * len(words)) or "false"
        return cur.execute(
            f"SELECT memory_id::VARCHAR, content, epoch(created_at) FROM {T_MEM}"
            f" WHERE org_id = ? AND agent_id = ? AND {LIVE} AND (content_hash = ?"
            f" OR memory_id IN (SELECT unnest(?::UUID[])) OR {hit})"
            " ORDER BY created_at DESC, seq DESC LIMIT ?",
            [who.org_id, who.agent_id, content_hash(fact), vec_ids, *words,
             SQL_CANDIDATES + len(vec_ids)],
        ).fetchall()  # fmt: skip

    rows = await mem.layer.db.run(q)
    return [Known(r[0], r[1], float(r[2]), F.split(r[1])) for r in rows], sims


async def decide_local(
    mem: Memory, fact: str, known: list[Known], sims: dict[str, float]
) -> Decision:
    """The local rule (module doc) for one fact."""
    sp = F.split(fact)
    for k in known:
        if k.split.words == sp.words or (
            sims.get(k.memory_id, 0.0) >= NOOP_SIM and F.restates(sp, k.split)
        ):
            return Decision("NOOP", fact, k, sims.get(k.memory_id))
    same: list[tuple[float, Known]] = [(1.0, k) for k in known if F.same_subject(sp, k.split)]
    others = [
        k
        for k in known
        if k.split.key and not F.same_subject(sp, k.split) and F.same_holder(sp, k.split)
    ]
    worker = mem.layer.semantic.worker
    if sp.subject and others and worker is not None:
        texts = [sp.subject, *(k.split.subject for k in others)]
        vecs = np.asarray(await worker.embed_now(texts, "passage"), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-9
        for k, s in zip(others, (vecs[1:] @ vecs[0]).tolist(), strict=True):
            if s >= SUBJECT_SIM:
                same.append((float(s), k))
    for s, k in same:
        if k.split.value == sp.value:
            return Decision("NOOP", fact, k, s)
    if same:
        s, k = max(same, key=lambda x: (x[0], x[1].created))
        return Decision("UPDATE", fact, k, s)
    return Decision("ADD", fact)


def parse_answer(text: str, labels: dict[str, Known]) -> list[Decision]:
    """The LLM's answer as decisions, or ValueError saying what is wrong with it."""
    try:
        data = json.loads(_FENCE.sub("", text.strip()))
    except ValueError:
        raise ValueError(f"not JSON: {text[:80]!r}") from None
    items = data.get("facts") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("no list of facts")
    by_id = {k.memory_id: k for k in labels.values()}
    out = []
    for it in items:
        if not isinstance(it, dict) or not isinstance(it.get("fact"), str) or not it["fact"]:
            raise ValueError(f"a fact without text: {str(it)[:80]}")
        event = str(it.get("event", "")).upper()
        if event not in ("ADD", "UPDATE", "NOOP"):
            raise ValueError(f"unknown event {it.get('event')!r}")
        target = None
        if event != "ADD":
            ref = str(it.get("id") or "")
            target = labels.get(ref) or by_id.get(ref)
            if target is None:
                raise ValueError(f"{event} names no listed memory ({ref!r})")
        out.append(Decision(event, it["fact"].strip(), target))
    return out


async def decide_llm(
    layer: AgentContext, messages: list[dict[str, str]], known: list[Known]
) -> list[Decision]:
    labels = {f"m{n}": k for n, k in enumerate(known[:LLM_CANDIDATES], start=1)}
    payload = {
        "existing_memories": [{"id": label, "content": k.content} for label, k in labels.items()],
        "conversation": messages,
    }
    prompt = [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
    ]
    answer = await asyncio.to_thread(llm.complete, layer.config, prompt, LLM_TIMEOUT_S)
    return parse_answer(answer, labels)


@agent_function(
    "process_memories",
    params=[
        Param(
            "messages",
            "JSON",
            description="The turn: text, or an array of texts or {role, content} messages",
        ),
        Param("memory_type", "VARCHAR", "fact", "Type of the memories stored"),
        Param("importance", "DOUBLE", 0.5, "Importance of those stored", minimum=0, maximum=1),
        Param("session_id", "VARCHAR", None, "The session the memories belong to"),
        Param("metadata", "JSON", None, "Key-value metadata of those stored", json_shape="object"),
    ],
    columns=COLUMNS,
    scope="memory:write",
    writes=True,
    mcp=McpTool(
        ("messages", "memory_type", "importance", "session_id", "metadata"),
        "Remember what a conversation turn says: each fact is ADD (new), UPDATE (corrects "
        "and retires an earlier memory) or NOOP (already known).",
    ),
)
async def process_memories(
    layer: AgentContext,
    who: Identity,
    *,
    messages: Any,
    memory_type: Any = "fact",
    importance: Any = 0.5,
    session_id: Any = None,
    metadata: Any = None,
) -> list[dict[str, Any]]:
    """Remember a conversation turn: each fact is ADD, UPDATE (the memory it corrects is
    superseded by the new one) or NOOP (already known); one row per fact."""
    mem = memory_of(layer)
    turn = F.parse_messages(messages)
    common = dict(
        memory_type=memory_type, importance=importance, session_id=session_id, metadata=metadata
    )
    check_item(content="x", **common)  # a bad argument fails before anything is decided
    async with _LOCKS((who.org_id, who.agent_id)):
        found = [(f, *await candidates(mem, who, f)) for f in F.extract(turn)]
        method, note, decisions = "local", None, None
        if llm.configured(layer.config):
            method = f"llm:{llm.model_name(layer.config)}"
            user_text = " ".join(m["content"] for m in turn if m["role"] == "user")
            pool = {k.memory_id: k for _, ks, _ in found for k in ks}
            if user_text.strip():
                for k in (await candidates(mem, who, user_text))[0]:
                    pool.setdefault(k.memory_id, k)
            try:
                decisions = await decide_llm(layer, turn, list(pool.values()))
            except (AgentError, ValueError) as exc:
                reason = exc.message if isinstance(exc, AgentError) else str(exc)
                method, note = "local", f"LLM answer unusable ({reason}); decided by the local rule"
        rows: list[dict[str, Any]] = []
        retired: set[str] = set()
        if decisions is None:
            for fact, known, sims in found:
                known = [k for k in known if k.memory_id not in retired]
                d = await decide_local(mem, fact, known, sims)
                rows.append(await _apply(layer, who, d, common, method, note, retired))
        else:
            for d in decisions:
                rows.append(await _apply(layer, who, d, common, method, note, retired))
        return rows


async def _apply(
    layer: AgentContext,
    who: Identity,
    d: Decision,
    common: dict[str, Any],
    method: str,
    note: str | None,
    retired: set[str],
) -> dict[str, Any]:
    """Write what a decision says; its result row."""
    target = d.target
    if d.event == "UPDATE" and target is not None and target.memory_id in retired:
        d.event, target = "ADD", None  # already corrected by an earlier fact of this turn
    row: dict[str, Any] = {
        "event": d.event,
        "memory_id": target.memory_id if target else None,
        "content": d.fact,
        "superseded_id": None,
        "previous_content": target.content if target else None,
        "similarity": d.similarity,
        "method": method,
        "note": note,
    }
    if d.event == "NOOP":
        return row
    supersedes = target.memory_id if d.event == "UPDATE" and target else None
    item = check_item(content=d.fact, supersedes=supersedes, **common)
    stored = (await store_items(layer, who, [item], True))[0]
    row["memory_id"] = stored["memory_id"]
    if stored["deduplicated"] and supersedes is None:
        row["event"] = "NOOP"  # the same text is already a current memory
        return row
    if supersedes is not None:
        retired.add(supersedes)
        row["superseded_id"] = supersedes
    else:
        row["previous_content"] = None
    return row
