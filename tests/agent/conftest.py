"""Fixtures for the agent-layer tests (helpers live in agent_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from trigger_support import Receiver

from tests.conftest import shared_model_dir


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The offline default model (all-MiniLM-L6-v2): the copy every test server of this
    process uses, converted once (a conversion of its own would cost 2-10 s more)."""
    return Path(shared_model_dir())


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A local webhook endpoint (answers queued status codes, then 200)."""
    r = Receiver()
    yield r
    r.close()
