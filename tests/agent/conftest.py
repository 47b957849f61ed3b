"""Fixtures for the agent-layer tests (helpers live in agent_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from trigger_support import Receiver


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline default model (all-MiniLM-L6-v2) converted once for the whole run."""
    from proxy.embedding.manage import ensure_default_model

    cache = tmp_path_factory.mktemp("agent-models")
    ensure_default_model(cache)
    return cache


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A local webhook endpoint (answers queued status codes, then 200)."""
    r = Receiver()
    yield r
    r.close()
