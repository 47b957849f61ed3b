"""Rank fusion of two ranked candidate lists (vector side, keyword side): memory search
and session search both place their hits with `interleave`.

Each candidate is placed by its better rank on either side (ranks from 1), then by its
rank on the other side (a candidate both sides drew comes before one only one side
drew), then by the caller's tie key. So the fused top k holds each side's top k/2
whatever the other side says: an exact keyword hit is never lost to a cosine cut-off,
nor a paraphrase to a keyword match. Why not reciprocal rank fusion (1/(60 + rank)
summed): it lets two mediocre ranks on both sides outrank a first place on one side,
which is exactly how a rare-word hit that the model ranks low gets lost.

`score` = (1/best + 1/(best x other)) / 2, the second term only when both sides drew
the candidate: in (0, 1], 1 for the first on both sides, 0.5 for the first on one side
only; it orders candidates as above (equal scores only where best and other are equal).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple

NOT_DRAWN = float("inf")


class Placed(NamedTuple):
    key: Any
    best: float  # better rank of the two sides (from 1)
    other: float  # rank on the other side, NOT_DRAWN when that side did not draw it
    score: float


def fused_score(best: float, other: float) -> float:
    return (1 / best + (1 / (best * other) if other != NOT_DRAWN else 0.0)) / 2


def interleave(
    vector_side: Iterable[Hashable],
    keyword_side: Iterable[Hashable],
    tie: Callable[[Any], Any] | None = None,
) -> list[Placed]:
    """Every candidate of either ranked list (best first, no repeats within a list),
    placed as the module docstring says; `tie(key)` orders equal places (default: key)."""
    vrank = {k: i for i, k in enumerate(vector_side, 1)}
    krank = {k: i for i, k in enumerate(keyword_side, 1)}
    placed = []
    for k in vrank.keys() | krank.keys():
        best, other = sorted((vrank.get(k, NOT_DRAWN), krank.get(k, NOT_DRAWN)))
        placed.append(Placed(k, best, other, fused_score(best, other)))
    tie_key = tie if tie is not None else (lambda k: k)
    placed.sort(key=lambda p: (p.best, p.other, tie_key(p.key)))
    return placed
