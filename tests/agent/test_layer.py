"""The agent layer's contract: registry names match the transpiler's, errors carry codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_support import open_layer, run, who

from proxy.core.errors import AgentError
from proxy.core.registry import REGISTRY
from transpiler.agent_calls import AGENT_FUNCTIONS


def test_every_registered_function_is_known_to_the_transpiler(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path):
            assert set(REGISTRY.functions) <= AGENT_FUNCTIONS

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
