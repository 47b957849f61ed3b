"""A subquery as an agent-function argument (store_memories((SELECT ...))): lifted out
with its SQL text for the server to run first; $n inside it is refused."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, agent_calls, transpile


@pytest.fixture(autouse=True)
def names():
    before = agent_calls.agent_functions()
    agent_calls.set_agent_functions(before | {"store_memories"})
    yield
    agent_calls.set_agent_functions(before)


def test_subquery_argument_is_lifted_with_its_sql() -> None:
    (st,) = transpile(
        "SELECT s.memory_id FROM store_memories((SELECT content, metadata FROM staging"
        " WHERE ok), wait := true) s WHERE s.deduplicated"
    )
    (call,) = st.agent_calls
    assert call.args[0].query == "SELECT content, metadata FROM staging WHERE ok"
    assert call.kwargs == (("wait", agent_calls.Arg(value=True)),)
    assert "staging" not in st.sql and call.relation in st.sql


def test_parameters_inside_the_subquery_are_refused() -> None:
    with pytest.raises(TranspileError) as err:
        transpile("SELECT * FROM store_memories((SELECT content FROM staging WHERE id = $1))")
    assert err.value.sqlstate == "0A000"
