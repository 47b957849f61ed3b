"""Memory search: two rankings, fused; nearest neighbours; filters; the weighted score.

Results are the weighted side and the keyword side interleaved (`retrieval.fuse`, as
session search does): each memory is placed by its better rank on either side, then by
its rank on the other, then by its weighted score. So the top k holds each side's top
k/2: a memory holding the query's rare words is found however far its vector is, and a
paraphrase however few words it shares. `score` is the fused score, (1/best +
1/(best x other)) / 2 in (0, 1] (1: first on both sides), which orders the results.

- The keyword side: the agent's BM25 index (`retrieval.bm25`, kept beside its vectors
  in `memory_index`) over the query's keywords, best first, its top_k (rows passing the
  filters).
- The weighted side: the candidates (the cosine neighbours, the keyword side, the
  memories without a vector that hold a keyword) ranked by `weighted_score` (weights
  from `memory_score_weights`, default 0.5, 0.25, 0.1, 0.1, 0.05 as in the product
  brief), its top_k:

    weighted_score = w_sem * max(cosine, 0) + w_kw * keyword + w_rec * recency
                   + w_imp * importance + w_conf * confidence

  - cosine: query vector (query mode) vs the memory's vector;
  - keyword (`keyword_score`): share of the query's keywords (lower case, stop words
    dropped) that occur in the content as words (a content word starting with the
    keyword counts too);
  - recency: 0.5 ** (age / 1 week), age from created_at;
  - importance and confidence: the stored values (0..1).

A memory without a usable vector (no model loaded, embedding pending or failed) is
scored without the semantic term, and the remaining weights are rescaled to sum to the
same total, so it competes fairly; its `score_kind` is 'keyword' (else 'hybrid') and
its `similarity_score` is the keyword score (the brief's "heuristic relevance"). It is
not in the BM25 index (that sits beside the vectors), so only the weighted side has it;
without a model every candidate is such a memory and the order is the weighted order.

Candidates of the weighted side: with a query vector, the nearest neighbours from the
agent's in-RAM index (`memory_index`: exact up to 20k vectors, above that a sign-code
shortlist ranked by exact cosine), oversampled (5 x top_k, at least 50), among the
memories that pass the filters; of those only the rows that can still make the weighted
top_k are scored exactly (`read_best`). The index holds the filter columns (live / not
expired, memory_type, session_id, importance) beside each vector, so this needs no
table scan; a metadata filter is evaluated in SQL first (the index does not hold
metadata). Rows come from the index's copies (or by primary key in one `IN (...)` query
for contents too long to keep) and the filters are checked again on the rows in Python
(`Filters.accepts`: the index may lag a supersede by a moment); if that leaves too few,
the sample grows tenfold until the whole agent is covered. Memories without a vector
are found by keyword (`contains` on the lower-cased content); with a query vector that
scan runs only when the agent has such memories (the index tracks them), and over the
rows the index keeps of them (`keyword_rows`: no table scan, whatever the agent's size)
while it keeps every one (up to `PENDING_ROWS_IN_RAM`, contents up to `TEXT_IN_RAM`);
else, or with a metadata filter, in SQL over the table. Only the top_k become result
dicts. Retired (superseded) memories are hidden unless
`include_superseded`; expired ones always are.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.agent.memory.args import now, parse_metadata
from proxy.agent.memory.index_types import Hits, RowFilter
from proxy.agent.memory.schema import COL, SELECT_COLUMNS, T_GRANT, T_MEM
from proxy.agent.memory.search_score import (  # noqa: F401  (recency_score: re-exported)
    keyword_score,
    keywords,
    kth_highest,
    recency_score,
    row_score,
    score_bounds,
)
from proxy.agent.memory.service import LIVE, memory_row
from proxy.agent.retrieval.fuse import interleave
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.memory.service import Memory


@dataclass
class Filters:
    """The WHERE clause of a scoped read: always (org, agents); optional narrowing."""

    org_id: str
    agents: list[str]
    include_superseded: bool = False
    memory_type: str | None = None
    session_id: str | None = None
    min_importance: float | None = None
    metadata: dict[str, Any] | None = None
    embedding_status: str | None = None
    sql: str = ""
    params: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Plain `IN (?, ?)`: a list parameter would turn the scope into a slow semi-join.
        where = ["org_id = ?", f"agent_id IN ({', '.join('?' * len(self.agents))})"]
        params: list[Any] = [self.org_id, *self.agents]
        where.append(
            LIVE if not self.include_superseded else "(expires_at IS NULL OR expires_at > now())"
        )
        if self.memory_type is not None:
            where.append("memory_type = ?")
            params.append(self.memory_type)
        if self.session_id is not None:
            where.append("session_id = ?")
            params.append(self.session_id)
        if self.min_importance is not None:
            where.append("importance >= ?")
            params.append(self.min_importance)
        if self.embedding_status is not None:
            where.append("embedding_status = ?")
            params.append(self.embedding_status)
        for key, value in (self.metadata or {}).items():
            where.append("json_extract(metadata, ?) = json(?)")
            params += ['$."' + key.replace('"', '\\"') + '"', json.dumps(value)]
        self.sql = " AND ".join(where)
        self.params = params

    def accepts(self, row: tuple[Any, ...], at: dt.datetime) -> bool:
        """The SQL filters, checked on a SELECT_COLUMNS row in Python. Metadata is not
        checked: it never changes, and search takes it from the table (`allowed`)."""

        def col(name: str) -> Any:
            return row[COL[name]]

        exp = col("expires_at")
        return not (
            col("org_id") != self.org_id
            or col("agent_id") not in self.agents
            or (not self.include_superseded and col("conflict_status") != "none")
            or (exp is not None and exp <= at)
            or (self.memory_type is not None and col("memory_type") != self.memory_type)
            or (self.session_id is not None and col("session_id") != self.session_id)
            or (self.min_importance is not None and col("importance") < self.min_importance)
            or (
                self.embedding_status is not None
                and col("embedding_status") != self.embedding_status
            )
        )

    @property
    def explicit(self) -> bool:
        return any(
            v is not None
            for v in (self.memory_type, self.session_id, self.min_importance, self.metadata)
        ) or bool(self.metadata)


def check_importance(value: Any, name: str = "min_importance") -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise AgentError.invalid(f"{name} must be a number between 0 and 1") from None
    if not 0.0 <= f <= 1.0 or f != f:
        raise AgentError.invalid(f"{name} must be between 0 and 1, got {value}")
    return f


async def visible_agents(mem: Memory, who: Identity, include_shared: bool) -> list[str]:
    """The caller, plus the agents that granted it read access when asked for."""
    if not include_shared:
        return [who.agent_id]

    def q(cur: duckdb.DuckDBPyConnection) -> list[str]:
        rows = cur.execute(
            f"SELECT owner_agent_id FROM {T_GRANT} WHERE org_id = ? AND grantee_agent_id = ?",
            [who.org_id, who.agent_id],
        ).fetchall()
        return [r[0] for r in rows]

    return [who.agent_id, *(a for a in await mem.layer.db.read(q) if a != who.agent_id)]


async def search(
    mem: Memory,
    who: Identity,
    *,
    query: str,
    top_k: int,
    memory_type: str | None,
    min_importance: float | None,
    session_id: str | None,
    metadata: Any,
    include_superseded: bool,
    include_shared: bool,
) -> list[dict[str, Any]]:
    mem.check_enabled()
    if not isinstance(query, str) or not query.strip():
        raise AgentError.invalid("search_memory needs a non-empty query")
    if top_k is None or int(top_k) < 1:
        raise AgentError.invalid(f"top_k must be at least 1, got {top_k}")
    top_k = min(int(top_k), mem.max_results)
    filters = Filters(
        who.org_id,
        await visible_agents(mem, who, bool(include_shared)),
        include_superseded=bool(include_superseded),
        memory_type=memory_type or None,
        session_id=session_id or None,
        min_importance=check_importance(min_importance),
        metadata=parse_metadata(metadata, "metadata filter"),
    )
    tokens = keywords(query)
    n_vectors = sum(mem.index.count(who.org_id, a) for a in filters.agents)
    qvec: np.ndarray | None = None
    if n_vectors and mem.layer.semantic.worker is not None:
        try:
            qvec = np.asarray((await mem.layer.semantic.worker.embed_now([query], "query"))[0])
            qvec = (qvec / (np.linalg.norm(qvec) or 1.0)).astype(np.float32)
        except Exception:  # the model failing must not take search down: keyword only
            qvec = None
    agents = [a for a in (mem.index.agent(who.org_id, x) for x in filters.agents) if a]
    want = max(top_k * 5, 50)

    unembedded = any(mem.index.unembedded.has(who.org_id, a) for a in filters.agents)
    # The memories without a vector (all of them when no agent searched has one), when
    # the index holds every one's row and no metadata filter needs the table.
    pending: list[tuple[Any, ...]] | None = None
    if tokens and (qvec is not None or not n_vectors) and not filters.metadata:
        held = [mem.index.unembedded.rows(who.org_id, a) for a in filters.agents]
        if all(h is not None for h in held):
            pending = [r for h in held if h is not None for r in h]
    where = RowFilter(
        now=time.time(),
        include_superseded=filters.include_superseded,
        memory_type=filters.memory_type,
        session_id=filters.session_id,
        min_importance=filters.min_importance,
    )

    at = now()

    def run(cur: duckdb.DuckDBPyConnection) -> tuple[dict[str, Candidate], list[str]]:
        found: dict[str, Candidate] = {}
        keyword_side: list[str] = []  # BM25 best first
        if qvec is not None:
            allowed = None
            if filters.metadata:  # the index does not hold metadata: ask the table
                allowed = cur.execute(
                    f"SELECT seq FROM {T_MEM} WHERE {filters.sql} AND has_embedding",
                    filters.params,
                ).fetchnumpy()["seq"]
                allowed = np.asarray(allowed, dtype=np.int64)
            best: list[float] = []  # exact scores of the rows in `found`: the bar to beat
            if tokens:  # the keyword side: its top_k, every one a candidate of the other
                hits = keyword_nearest(agents, tokens, want, qvec, allowed, where)
                for r, sim in read_in_order(cur, hits, filters, at, top_k):
                    found[r[0]] = scored(mem.weights, tokens, r, sim, at)
                    keyword_side.append(r[0])
                    best.append(found[r[0]][2])
            c = want
            while True:
                hits = nearest(agents, qvec, c, allowed, where)
                found.update(
                    read_best(cur, hits, tokens, mem.weights, at, top_k, filters, found, best)
                )
                if len(found) >= top_k or len(hits.seqs) < c or allowed is not None:
                    break
                c *= 10
        if pending is not None:
            for r in keyword_rows(pending, tokens, filters, at, max(want, 200)):
                if r[0] not in found:
                    found[r[0]] = scored(mem.weights, tokens, r, None, at)
        elif tokens and (qvec is None or unembedded):
            hit = " + ".join(["contains(lower(content), ?)::INT"] * len(tokens))
            extra = "" if qvec is None else " AND NOT has_embedding"
            rows = cur.execute(
                f"SELECT {SELECT_COLUMNS} FROM {T_MEM} WHERE {filters.sql}{extra}"
                f" AND ({hit}) > 0 ORDER BY ({hit}) DESC, created_at DESC LIMIT ?",
                [*filters.params, *tokens, *tokens, max(want, 200)],
            ).fetchall()
            for r in rows:
                if str(r[0]) not in found:
                    found[str(r[0])] = scored(mem.weights, tokens, r, None, at)
        return found, keyword_side

    found, keyword_side = await mem.layer.db.read(run)  # reads only: the change clock stays
    # The weighted side: every candidate by the weighted score, from the raw rows.
    pool: dict[str, tuple[float, float, float | None, tuple[Any, ...]]] = {}
    for mid, (row, sim, score, kw) in found.items():
        if sim is None and kw <= 0:
            continue
        pool[mid] = (score, kw, sim, row)

    def by_weight(mid: str) -> tuple[float, float, str]:
        s = pool[mid]
        return (-s[0], -s[3][_CREATED].timestamp(), mid)

    weighted_side = sorted(pool, key=by_weight)[:top_k]
    result = []
    for p in interleave(weighted_side, keyword_side, by_weight)[:top_k]:
        weighted, kw, sim, row = pool[p.key]
        out = memory_row(row, mem.access.pending)
        out["keyword_score"] = kw
        out["score"] = p.score
        out["weighted_score"] = weighted
        out["similarity_score"] = sim if sim is not None else kw
        out["score_kind"] = "hybrid" if sim is not None else "keyword"
        result.append(out)
    mem.access.touch([r["memory_id"] for r in result])
    return result


_CREATED, _CONTENT = COL["created_at"], COL["content"]

# A SELECT_COLUMNS row, its cosine (None: no vector), weighted score, keyword score.
Candidate = tuple[tuple[Any, ...], float | None, float, float]


def scored(
    weights: tuple[float, float, float, float, float],
    tokens: list[str],
    row: tuple[Any, ...],
    sim: float | None,
    at: dt.datetime,
) -> Candidate:
    return (row, sim, *row_score(weights, tokens, row, sim, at))


def keyword_rows(
    rows: list[tuple[Any, ...]], tokens: list[str], filters: Filters, at: dt.datetime, limit: int
) -> list[tuple[Any, ...]]:
    """The table scan for keywords, on rows held in RAM: those passing the filters whose
    lower-cased content contains a keyword, most keywords first, then newest; `limit`."""
    hits = []
    for r in rows:
        if filters.accepts(r, at):
            text = r[_CONTENT].lower()
            n = sum(t in text for t in tokens)
            if n:
                hits.append((-n, -r[_CREATED].timestamp(), r))
    hits.sort(key=lambda h: h[:2])
    return [h[2] for h in hits[:limit]]


def read_in_order(
    cur: duckdb.DuckDBPyConnection, hits: Hits, filters: Filters, at: dt.datetime, limit: int
) -> list[tuple[tuple[Any, ...], float]]:
    """The first `limit` rows of `hits` (in their order) that pass the filters, checked
    again on the rows (as `read_best` does): the index's copies, or the table's rows for
    contents too long to keep."""
    out: list[tuple[tuple[Any, ...], float]] = []
    for start in range(0, len(hits.ids), limit):
        part = slice(start, start + limit)
        rows = {r[0]: r for r in hits.rows[part] if r is not None}
        missing = [i for i, r in zip(hits.ids[part], hits.rows[part], strict=True) if r is None]
        if missing:
            rows.update(
                (r[0], r)
                for r in cur.execute(
                    f"SELECT {SELECT_COLUMNS} FROM {T_MEM}"
                    f" WHERE memory_id IN ({', '.join('?' * len(missing))})",
                    missing,
                ).fetchall()
            )
        for mid, sim in zip(hits.ids[part].tolist(), hits.sims[part].tolist(), strict=True):
            r = rows.get(mid)
            if r is not None and filters.accepts(r, at):
                out.append((r, sim))
                if len(out) == limit:
                    return out
    return out


def nearest(
    agents: list[Any],
    qvec: np.ndarray,
    k: int,
    allowed: np.ndarray | None,
    where: RowFilter | None = None,
) -> Hits:
    """Top k over one or more agents' indexes (merged by similarity)."""
    parts = [a.hits(qvec, k, allowed, where) for a in agents]
    if not parts:
        f64 = np.zeros(0, dtype=np.float64)
        none = np.empty(0, object)
        i64, f32 = np.zeros(0, dtype=np.int64), np.zeros(0, np.float32)
        return Hits(i64, f32, none, none, f64, f64, f64, none)
    if len(parts) == 1:
        return parts[0]
    merged = _concat(parts)
    order = np.argsort(-merged.sims, kind="stable")[:k]
    return Hits(*(f[order] if f is not None else None for f in merged))


def _concat(parts: list[Hits]) -> Hits:
    return Hits(
        *(
            np.concatenate([p[i] for p in parts]) if parts[0][i] is not None else None
            for i in range(len(parts[0]))
        )
    )


def keyword_nearest(
    agents: list[Any],
    tokens: list[str],
    k: int,
    qvec: np.ndarray | None,
    allowed: np.ndarray | None,
    where: RowFilter | None,
) -> Hits:
    """The BM25 top k over one or more agents' indexes (merged by BM25 score, each
    agent's index having its own statistics), each with its exact cosine similarity to
    the query."""
    parts = [a.keyword_hits(tokens, k, qvec, allowed, where, rare_only=False) for a in agents]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return nearest([], np.zeros(0, np.float32), 0, None)
    merged = _concat(parts)
    assert merged.bm25 is not None
    order = np.argsort(-merged.bm25, kind="stable")[:k]
    return Hits(*(f[order] for f in merged))  # type: ignore[index]


def read_best(
    cur: duckdb.DuckDBPyConnection,
    hits: Hits,
    tokens: list[str],
    weights: tuple[float, float, float, float, float],
    at: dt.datetime,
    top_k: int,
    filters: Filters,
    found: Container[str] = (),
    best: list[float] | None = None,
) -> dict[str, Candidate]:
    """The rows of `hits` that can make the top_k, re-checked against the filters.

    `found`: rows taken already (by an earlier call), left out; `best`: their exact
    scores, which raise the bar from the start (appended to with the rows taken here).

    The index's copies of the scoring columns bound each hit's hybrid score first (exact,
    except a keyword score of a content too long to keep in RAM: 0..1), and only hits
    whose best case reaches the k-th best score still possible are taken: from the index's
    row copies, or read from the table for a content too long to keep (a read costs
    about as much per row as the rest of a search). The rows taken are checked against
    the filters again (a row changed by a concurrent write may be half way through its
    refresh); a row that fails lowers the bar, and the next hits are taken.
    """
    best = [] if best is None else best  # exact scores of the rows read and accepted
    unread = np.fromiter((i not in found for i in hits.ids), dtype=bool, count=len(hits.ids))
    # Keyword scores (a regex pass over each text) only where the best case, a keyword
    # score of 1, reaches the bar the rows already taken set.
    kws = np.full(len(hits.ids), np.nan)
    if len(best) >= top_k:
        unread &= score_bounds(weights, hits, kws, at.timestamp())[1] >= kth_highest(best, top_k)
    for i in np.flatnonzero(unread).tolist():
        text = hits.texts[i]
        kws[i] = np.nan if text is None else keyword_score(tokens, text)
    lo, hi = score_bounds(weights, hits, kws, at.timestamp())
    out: dict[str, Candidate] = {}
    while unread.any():
        possible = np.concatenate([np.asarray(best), lo[unread]])
        bar = kth_highest(possible, top_k)
        take = np.flatnonzero(unread & (hi >= bar))
        if not len(take):
            break
        unread[take] = False
        by_id = dict(zip(hits.ids[take].tolist(), hits.sims[take].tolist(), strict=True))
        rows = [r for r in hits.rows[take] if r is not None]
        missing = [i for i, r in zip(hits.ids[take], hits.rows[take], strict=True) if r is None]
        if missing:  # by primary key in a plain IN list (a filter beside it slows the scan)
            rows += cur.execute(
                f"SELECT {SELECT_COLUMNS} FROM {T_MEM}"
                f" WHERE memory_id IN ({', '.join('?' * len(missing))})",
                missing,
            ).fetchall()
        for r in rows:
            if filters.accepts(r, at):
                out[r[0]] = scored(weights, tokens, r, by_id[r[0]], at)
                best.append(out[r[0]][2])
    return out
