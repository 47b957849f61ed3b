"""The agent layer's contract: the transpiler knows the registry's names, errors carry codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_support import open_layer, run, who

from proxy.core.errors import AgentError
from proxy.core.registry import REGISTRY
from transpiler import agent_functions


def test_the_transpiler_knows_exactly_the_registered_functions(tmp_path: Path) -> None:
    # The registry hands its names to the transpiler (no second list to keep equal).
    async def go() -> None:
        async with open_layer(tmp_path):
            assert len(REGISTRY.functions) >= 38
            assert agent_functions() == REGISTRY.names()

    run(go())


def test_unknown_keyword_argument_is_a_clear_error(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            name = next(iter(layer.registry.functions), None)
            if name is None:
                pytest.fail("no agent function registered")
            with pytest.raises(AgentError) as err:
                await layer.call(name, who(), no_such_argument=1)
            assert err.value.sqlstate == "22023"
            assert "no_such_argument" in err.value.message

    run(go())
