"""Memory search's weighted score (see search.py's docstring) and the bounds that let
search score exactly only the candidates that can make its top k."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np

from proxy.agent.memory.index_types import Hits
from proxy.agent.memory.schema import COL

WEEK = 7 * 24 * 3600.0

_CONTENT, _CREATED = COL["content"], COL["created_at"]
_SCORE_COLUMNS = {c: COL[c] for c in ("created_at", "importance", "confidence")}

_STOP_WORDS = (
    "a an and are as at be but by for from has have he her his i in is it its me my of on or"
    " our she so that the their them then there these they this to was we were what when"
    " where which who why will with you your do does did how about into than"
)
_STOP = frozenset(_STOP_WORDS.split())
_WORD = re.compile(r"\w+")


def keywords(text: str) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1]
    kept = [w for w in words if w not in _STOP]
    return list(dict.fromkeys(kept or words))


def keyword_score(tokens: list[str], content: str) -> float:
    if not tokens:
        return 0.0
    found = _WORD.findall(content.lower())
    words = set(found)
    # " t" in " w1 w2 ...": some word starts with t (words hold no spaces), in one C-level
    # scan instead of a generator over the words per token (per candidate row of a search).
    spaced = " " + " ".join(found)
    hits = 0
    for t in tokens:
        if t in words or (len(t) >= 3 and " " + t in spaced):
            hits += 1
    return hits / len(tokens)


def kth_highest(scores: Any, k: int) -> float:
    """The k-th highest of `scores` (-inf when fewer)."""
    return float(np.partition(np.asarray(scores), -k)[-k]) if len(scores) >= k else -np.inf


_BOUND_SLACK = 1e-6  # float vs datetime arithmetic of the same score


def score_bounds(
    weights: tuple[float, float, float, float, float],
    hits: Hits,
    kws: np.ndarray,
    at_epoch: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest hybrid score of each hit (`hybrid_score`, vectorised); a NaN
    keyword score is unknown."""
    w_sem, w_kw, w_rec, w_imp, w_conf = weights
    age = np.maximum(at_epoch - hits.created, 0.0)
    base = (
        w_sem * np.maximum(hits.sims.astype(np.float64), 0.0)
        + w_rec * 0.5 ** (age / WEEK)
        + w_imp * hits.importance
        + w_conf * hits.confidence
    )
    known = ~np.isnan(kws)
    lo = base + w_kw * np.where(known, kws, 0.0) - _BOUND_SLACK
    hi = base + w_kw * np.where(known, kws, 1.0) + _BOUND_SLACK
    return lo, hi


def row_score(
    weights: tuple[float, float, float, float, float],
    tokens: list[str],
    row: tuple[Any, ...],
    sim: float | None,
    at: dt.datetime,
) -> tuple[float, float]:
    """A SELECT_COLUMNS row's hybrid score and keyword score."""
    kw = keyword_score(tokens, row[_CONTENT])
    parts = {c: row[i] for c, i in _SCORE_COLUMNS.items()}
    return hybrid_score(weights, sim, kw, parts, at), kw


def recency_score(created_at: dt.datetime, at: dt.datetime) -> float:
    """0.5 ** (age / 1 week): the recency part of the hybrid score."""
    return 0.5 ** (max((at - created_at).total_seconds(), 0.0) / WEEK)


def hybrid_score(
    weights: tuple[float, float, float, float, float],
    sim: float | None,
    kw: float,
    row: dict[str, Any],
    at: dt.datetime,
) -> float:
    w_sem, w_kw, w_rec, w_imp, w_conf = weights
    recency = recency_score(row["created_at"], at)
    rest = (
        w_kw * kw
        + w_rec * recency
        + w_imp * float(row["importance"])
        + w_conf * float(row["confidence"])
    )
    if sim is not None:
        return w_sem * max(float(sim), 0.0) + rest
    others = w_kw + w_rec + w_imp + w_conf
    total = others + w_sem
    return rest * (total / others) if others > 0 else 0.0
