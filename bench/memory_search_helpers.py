"""Vector-only and keyword-only memory rankings, for bench/sessions.py's recall check:
each side of search_memory's candidate pools on its own, straight from the agent's
in-RAM index (the same code search uses)."""

from __future__ import annotations

import time

import numpy as np

from proxy.agent.memory.index_types import RowFilter
from proxy.agent.memory.search import keywords
from proxy.core.identity import Identity


async def vector_top(layer, who: Identity, question: str, k: int) -> list[str]:
    agent = layer.memory.index.agent(who.org_id, who.agent_id)
    q = np.asarray((await layer.semantic.worker.embed_now([question], "query"))[0])
    _, _, ids = agent.nearest(q / np.linalg.norm(q), k, None, RowFilter(now=time.time()))
    return ids.tolist()


def keyword_top(layer, who: Identity, question: str, k: int) -> list[str]:
    agent = layer.memory.index.agent(who.org_id, who.agent_id)
    hits = agent.keyword_hits(
        keywords(question), k, None, None, RowFilter(now=time.time()), rare_only=False
    )
    return hits.ids.tolist()
