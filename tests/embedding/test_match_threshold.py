"""semantic_match's default threshold per model: the registry's values, and the
measurements behind all-MiniLM-L6-v2's (see its ModelSpec in proxy/embedding/registry.py).

The tickets are the README's example table; the queries are what a person would type
at it, each with the tickets a person would pick.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proxy.embedding.onnx_embedder import OnnxEmbedder
from proxy.embedding.registry import (
    GENERIC_MATCH_THRESHOLD,
    KNOWN_MODELS,
    OFFLINE_MODEL,
    match_threshold,
)

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
TICKETS = {
    1: "I was charged twice for my order, please give me my money back",
    2: "The headphones arrived broken and I want a refund",
    3: "My package has not arrived yet, where is it?",
    4: "I cannot log in after resetting my password",
    5: "Please cancel my subscription and refund this month's payment",
    6: "Can you add a dark mode to the mobile app?",
    7: "The jacket does not fit, how do I return it for a refund?",
    8: "Please update the credit card on file for my subscription",
}
REFUNDS = {1, 2, 5, 7}
HEADLINE = "customer wants a refund"  # the README's first query
QUERIES = {
    HEADLINE: REFUNDS,
    "refund": REFUNDS,
    "money back": REFUNDS,
    "reimburse me": REFUNDS,
    "login problems": {4},
    "cannot sign in": {4},
    "password reset": {4},
    "where is my order": {3},
    "late delivery": {3},
    "dark theme": {6},
    "change payment method": {8},
}
MINILM = KNOWN_MODELS[OFFLINE_MODEL].match_threshold


@pytest.fixture(scope="module")
def scores(minilm_dir: Path) -> dict[str, dict[int, float]]:
    """Cosine similarity of each query to each ticket, as semantic_match computes it
    (tickets embedded as passages, the search text as a query)."""
    model = OnnxEmbedder(minilm_dir)
    ids = list(TICKETS)
    passages = model.embed_batch([TICKETS[i] for i in ids], mode="passage")
    queries = list(QUERIES)
    searched = model.embed_batch(queries, mode="query")
    sims = np.asarray(searched) @ np.asarray(passages).T
    return {
        q: dict(zip(ids, map(float, row), strict=True))
        for q, row in zip(queries, sims, strict=True)
    }


def misjudged(scores: dict[str, dict[int, float]], threshold: float) -> int:
    return sum(
        (s >= threshold) != (i in QUERIES[q]) for q, row in scores.items() for i, s in row.items()
    )


def test_the_tickets_are_the_readmes() -> None:
    for text in TICKETS.values():
        assert text.replace("'", "''") in README


def test_registry_values() -> None:
    assert MINILM == 0.33
    assert match_threshold("all-minilm-l6-v2") == MINILM
    assert match_threshold("all-minilm-l6-v2+int8") == MINILM  # the int8 copy
    assert match_threshold("bge-small-en-v1.5") == 0.7
    assert match_threshold("my-imported-model") == GENERIC_MATCH_THRESHOLD == 0.7
    assert match_threshold(None) == GENERIC_MATCH_THRESHOLD


def test_minilm_default_separates_the_readme_query_with_margin(scores) -> None:
    row = scores[HEADLINE]
    lowest_refund = min(row[i] for i in REFUNDS)
    highest_other = max(s for i, s in row.items() if i not in REFUNDS)
    assert lowest_refund == pytest.approx(0.443, abs=0.005)
    assert highest_other == pytest.approx(0.220, abs=0.005)
    # the old default (0.7) matched no refund ticket, and 0.5 only some
    assert lowest_refund < max(row[i] for i in REFUNDS) < 0.7
    assert lowest_refund < 0.5
    assert lowest_refund - MINILM >= 0.1 and MINILM - highest_other >= 0.1


def test_minilm_default_is_on_the_plateau_of_fewest_errors(scores) -> None:
    errors = {t / 100: misjudged(scores, t / 100) for t in range(10, 71)}
    assert sum(len(q) for q in QUERIES.values()) == 23 and len(QUERIES) * len(TICKETS) == 88
    assert misjudged(scores, MINILM) == 5
    assert min(errors.values()) == 3
    plateau = [t for t, n in errors.items() if n <= 5]
    assert min(plateau) == 0.28 and max(plateau) == 0.39


def test_the_engine_registers_the_default_and_the_range_check(tmp_path, monkeypatch) -> None:
    """The hash test provider is no model the registry knows: the generic default."""
    import duckdb

    from proxy.core import config
    from proxy.db.duckdb_errors import map_duckdb_error
    from proxy.semantic.engine import SemanticEngine

    env = {"HATIDATA_DATA_DIR": str(tmp_path), "HATIDATA_EMBEDDING_PROVIDER": "hash"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    db = duckdb.connect()
    engine = SemanticEngine(config.load(None, env), db)
    assert engine.embedder is not None and engine.match_threshold == GENERIC_MATCH_THRESHOLD
    cur = db.cursor()
    assert cur.execute("SELECT __HATI_DEFAULT_THRESHOLD__()").fetchone() == (0.7,)
    assert cur.execute("SELECT __HATI_THRESHOLD__(-1), __HATI_THRESHOLD__(NULL)").fetchone() == (
        -1.0,
        None,
    )
    with pytest.raises(duckdb.Error) as info:
        cur.execute("SELECT __HATI_THRESHOLD__($1)", [1.5])
    error = map_duckdb_error(info.value)
    assert error.sqlstate == "22023"
    assert str(error.message).endswith("between -1 and 1 (a cosine similarity), not 1.5")
    engine.embedder.close()
