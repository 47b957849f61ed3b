"""In-process agent layer for unit tests: a real DuckDB, a real or hash embedder.

Import as `from agent_support import open_layer, run, who` (pytest puts this folder on sys.path).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from proxy.agent.layer import AgentLayer
from proxy.core import config
from proxy.core.identity import Identity
from proxy.db.engine import Engine
from proxy.semantic.engine import SemanticEngine

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@contextlib.asynccontextmanager
async def open_layer(
    tmp: Path,
    *,
    provider: str = "hash",
    model_dir: Path | None = None,
    database: str = ":memory:",
    **settings: Any,
) -> AsyncIterator[AgentLayer]:
    """A started AgentLayer on its own Engine; stopped (flushing everything) on exit.

    provider "hash": deterministic test vectors (fast, no search quality);
    provider "onnx": the real model from `model_dir`.
    """
    env = {
        "HATIDATA_DATA_DIR": str(tmp / "data"),
        "HATIDATA_DATABASE": database,
        "HATIDATA_EMBEDDING_PROVIDER": provider,
        "HATIDATA_EMBEDDING_FLUSH_INTERVAL_MS": "50",
    }
    if model_dir is not None:
        env["HATIDATA_MODEL_DIR"] = str(model_dir)
    for key, value in settings.items():
        env["HATIDATA_" + key.upper()] = str(value)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        cfg = config.load(None, env)
        config.export_embedding_env(cfg)
        engine = Engine(cfg)
        layer = AgentLayer(engine, SemanticEngine(cfg, engine.db, engine.agent_db.db))
        await layer.semantic.start()
        await layer.start()
        try:
            yield layer
        finally:
            await layer.stop()
            await layer.semantic.stop()
            engine.close()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def who(agent_id: str = "agent-a", org_id: str = "local") -> Identity:
    return Identity(org_id=org_id, agent_id=agent_id, user="tester")


Call = Callable[..., Coroutine[Any, Any, list[dict[str, Any]]]]
