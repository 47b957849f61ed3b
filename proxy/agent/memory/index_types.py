"""What the in-RAM memory index (index.py) keeps of each memory and answers with: the
filter columns of a row (`Attrs`), the search filters it applies itself (`RowFilter`), its
nearest rows with their scoring columns (`Hits`), and the hashed codes filters compare."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

_NONE = -1  # code of a NULL memory_type / session_id


def value_code(value: str | None) -> int:
    """A memory_type / session_id as a non-negative 63-bit hash: filters compare ints, and
    no table of every value ever seen grows with use (a collision: odds 2**-63)."""
    if value is None:
        return _NONE
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


@dataclass
class Attrs:
    """The filter columns of one memory, as the index keeps them."""

    memory_id: str
    importance: float = 0.5
    expires_at: dt.datetime | None = None
    memory_type: str | None = None
    session_id: str | None = None
    live: bool = True  # conflict_status = 'none'
    created_at: float = 0.0  # epoch seconds
    confidence: float = 1.0
    content: str | None = None  # None when longer than TEXT_IN_RAM
    row: tuple[Any, ...] | None = None  # the whole SELECT_COLUMNS row, when content is kept
    words: str | None = None  # the whole content, for the keyword index (not kept)


TEXT_IN_RAM = 2000  # longer contents are read from the table when scored


class Hits(NamedTuple):
    """Nearest rows, best first, with what the index holds for scoring them."""

    seqs: np.ndarray
    sims: np.ndarray
    ids: np.ndarray  # memory ids (object)
    texts: np.ndarray  # content or None (object)
    created: np.ndarray  # epoch seconds
    importance: np.ndarray
    confidence: np.ndarray
    rows: np.ndarray  # whole SELECT_COLUMNS rows or None (object)
    bm25: np.ndarray | None = None  # BM25 scores (keyword_hits only)


@dataclass
class RowFilter:
    """Search filters the index can apply (the rest go through `allowed`)."""

    now: float  # epoch seconds: rows with expires_at <= now are hidden
    include_superseded: bool = False
    memory_type: str | None = None
    session_id: str | None = None
    min_importance: float | None = None
