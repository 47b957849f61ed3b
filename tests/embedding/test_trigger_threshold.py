"""register_trigger's default threshold per model: the measurement behind
all-MiniLM-L6-v2's (its ModelSpec in proxy/embedding/registry.py), and a trigger registered
without a threshold on a real server judging the texts as a person would.

The labelled set: five concepts an agent might watch for, each with four texts that
should fire it; every text is also a text that should not fire the other four concepts,
and twelve neutral texts (some near misses: a lawyer approving a policy, a payment
received) should fire none. 5 concepts x 32 texts = 160 pairs, 20 of them positive.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psycopg
import pytest

from proxy.embedding.onnx_embedder import OnnxEmbedder
from proxy.embedding.registry import (
    GENERIC_TRIGGER_THRESHOLD,
    KNOWN_MODELS,
    OFFLINE_MODEL,
    trigger_threshold,
)
from tests.conftest import start_server

CONCEPTS = {
    "customer threatens legal action": [
        "If this is not fixed by Friday my lawyer will be in touch",
        "We are going to sue your company over this outage",
        "I have asked my attorney to file a complaint against you",
        "Expect to hear from our legal team about the breach of contract",
    ],
    "security breach or leaked credentials": [
        "Someone logged into the admin account from an unknown IP address",
        "An API key was committed to a public GitHub repository",
        "The database passwords were posted on a paste site",
        "We detected unauthorized access to customer records last night",
    ],
    "customer wants to cancel their subscription": [
        "Please cancel my plan at the end of this month",
        "I no longer need the service, how do I stop being billed?",
        "We are moving to a competitor and want to end our contract",
        "Close my account and stop the monthly charges",
    ],
    "payment failed": [
        "The card was declined when the invoice was charged",
        "Stripe reports the transaction was rejected for insufficient funds",
        "Our automatic payment did not go through this month",
        "The bank refused the transfer for order 1182",
    ],
    "the application crashes": [
        "The app closes by itself every time I open the settings page",
        "The server process died with a segmentation fault",
        "After the update the program freezes and then quits",
        "The mobile app crashes on startup on Android 14",
    ],
}
NEUTRAL = [
    "The quarterly revenue report is due next Tuesday",
    "User prefers dark mode and short answers",
    "Meeting with the design team moved to 3 pm",
    "The customer asked for a copy of last month's invoice",
    "Thanks, the new dashboard looks great",
    "Shipping to Canada takes five to seven business days",
    "I changed my password and can log in again",
    "Please add my colleague to the team workspace",
    "The contract renewal was signed today",
    "Our lawyer reviewed the privacy policy and approved it",
    "Upgrade me to the annual plan",
    "The payment of 40 EUR was received, thank you",
]
TEXTS = [t for texts in CONCEPTS.values() for t in texts] + NEUTRAL
MINILM = KNOWN_MODELS[OFFLINE_MODEL].trigger_threshold


@pytest.fixture(scope="module")
def scores(minilm_dir: Path) -> dict[str, dict[str, float]]:
    """Cosine similarity of each concept (embedded as a query, as register_trigger does)
    to each text (as a passage, as a written memory is)."""
    model = OnnxEmbedder(minilm_dir)
    concepts = list(CONCEPTS)
    sims = (
        np.asarray(model.embed_batch(concepts, mode="query"))
        @ np.asarray(model.embed_batch(TEXTS, mode="passage")).T
    )
    return {
        c: dict(zip(TEXTS, map(float, row), strict=True))
        for c, row in zip(concepts, sims, strict=True)
    }


def misjudged(scores: dict[str, dict[str, float]], threshold: float) -> int:
    return sum(
        (s >= threshold) != (t in CONCEPTS[c]) for c, row in scores.items() for t, s in row.items()
    )


def test_registry_values() -> None:
    assert MINILM == 0.39
    assert trigger_threshold("all-MiniLM-L6-v2") == trigger_threshold("minilm+int8") == MINILM
    assert trigger_threshold("bge-small-en-v1.5") == 0.7
    assert trigger_threshold("my-imported-model") == GENERIC_TRIGGER_THRESHOLD == 0.7
    assert trigger_threshold(None) == GENERIC_TRIGGER_THRESHOLD


def test_minilm_default_has_the_fewest_errors(scores) -> None:
    errors = {t / 100: misjudged(scores, t / 100) for t in range(10, 71)}
    assert len(TEXTS) * len(CONCEPTS) == 160
    assert errors[MINILM] == min(errors.values()) == 6
    assert [t for t, n in errors.items() if n <= 8] == [0.37, 0.38, 0.39, 0.4, 0.41, 0.42]
    assert errors[0.7] == 20  # the old default: no positive text fires


def test_trigger_without_threshold_fires_on_the_right_texts(tmp_path: Path) -> None:
    """A real server on the default model: register_trigger without a threshold gets the
    model's, fires on texts about the concept and not on the others."""
    srv = start_server(tmp_path)
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as c:
            row = c.execute(
                "SELECT threshold, embedding_model FROM register_trigger('crash', "
                "'the application crashes', cooldown_secs := 0)"
            ).fetchone()
            assert row == (MINILM, "all-minilm-l6-v2")
            for text in TEXTS:
                matched, score = c.execute(
                    "SELECT matched, score FROM test_trigger('crash', %s)", [text]
                ).fetchone()
                should = text in CONCEPTS["the application crashes"]
                assert matched == should, f"{text!r} scored {score:.3f}"
            # and a written memory really fires it (only the positive one)
            for text in (NEUTRAL[0], CONCEPTS["the application crashes"][1]):
                c.execute("SELECT * FROM store_memory(%s, wait := true)", [text])
            fired = _wait_fires(c)
            assert fired == [CONCEPTS["the application crashes"][1]]
    finally:
        srv.stop()


def _wait_fires(c: psycopg.Connection) -> list[str]:
    import time

    deadline = time.monotonic() + 20
    while True:
        fires = c.execute("SELECT input_text FROM trigger_fires('crash')").fetchall()
        if fires or time.monotonic() > deadline:
            time.sleep(0.5)  # a wrong fire would come with the right one
            return [r[0] for r in c.execute("SELECT input_text FROM trigger_fires('crash')")]
        time.sleep(0.2)
