"""One rule for who the agent is, on every interface (proxy/access/agent_rule.py).

A memory stored over SQL is found over MCP (HTTP and stdio) and REST by a caller the
rule makes the same agent: keyless callers that name no agent are all the server's
default agent; a named agent is that agent everywhere; an agent key is its agent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import requests

from tests.access.keys_cli_support import create, wait_for_channel
from tests.conftest import ServerProcess, start_server
from tests.mcp.mcp_support import HttpAgent, StdioAgent

MEMORY = "/v1/organizations/local/agent-memory"


def sql(srv: ServerProcess, query: str, password: str | None = None, agent: str | None = None):
    """One statement over the wire as psql would send it (user `me`, the OS user)."""
    options = f"-c hatidata_agent_id={agent}" if agent else ""
    with psycopg.connect(
        host=srv.host,
        port=srv.port,
        user="me",
        dbname="hatidata",
        password=password,
        options=options,
        autocommit=True,
    ) as conn:
        return conn.execute(query).fetchall()


def rest(srv: ServerProcess, path: str, key: str | None = None, **params: Any) -> Any:
    headers = {"Authorization": f"ApiKey {key}"} if key else {}
    r = requests.get(srv.rest_url + path, params=params, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def found(hits: list[dict[str, Any]], text: str) -> set[str]:
    """The agents of the search hits whose content contains text."""
    return {h["entry"]["agent_id"] for h in hits if text in h["entry"]["content"]}


@pytest.fixture(scope="module")
def trust(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("trust-ident")
    srv = start_server(tmp, "--embedding-provider", "hash", "--database", ":memory:")
    yield srv
    srv.stop()


def test_keyless_callers_are_one_default_agent_everywhere(trust: ServerProcess) -> None:
    rows = sql(trust, "SELECT agent_id FROM whoami()")
    assert rows == [("default",)]  # not the user name `me`
    sql(trust, "SELECT * FROM store_memory('the walrus ledger is blue', wait := true)")
    # MCP over HTTP, no key, no header: the same agent.
    hits = HttpAgent(trust).data("search_memory", {"query": "walrus ledger"})
    assert any("walrus ledger" in h["content"] for h in hits)
    # MCP over stdio without --agent-id: the same agent.
    with StdioAgent(trust, None) as agent:
        agent.initialize()
        hits = agent.data("search_memory", {"query": "walrus ledger"})
        assert any("walrus ledger" in h["content"] for h in hits)
    # REST, no key: the org's view finds it as the default agent's, and so does agent_id.
    assert found(rest(trust, MEMORY + "/search", query="walrus ledger"), "walrus") == {"default"}
    one = rest(trust, MEMORY + "/search", query="walrus ledger", agent_id="default")
    assert found(one, "walrus") == {"default"}


def test_a_named_agent_is_that_agent_everywhere(trust: ServerProcess) -> None:
    sql(trust, "SELECT * FROM store_memory('otter minutes', wait := true)", agent="otter")
    assert sql(trust, "SELECT count(*) FROM list_memories()") == [(1,)]  # default: not otter's
    named = HttpAgent(trust, "otter").data("search_memory", {"query": "otter minutes"})
    assert [h["content"] for h in named] == ["otter minutes"]
    other = HttpAgent(trust).data("search_memory", {"query": "otter minutes"})
    assert all("otter" not in h["content"] for h in other)
    with StdioAgent(trust, "otter") as agent:
        agent.initialize()
        hits = agent.data("search_memory", {"query": "otter minutes"})
        assert [h["content"] for h in hits] == ["otter minutes"]
    hits = rest(trust, MEMORY + "/search", query="otter minutes", agent_id="otter")
    assert found(hits, "otter") == {"otter"}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict]]:
    srv = start_server(tmp_path_factory.mktemp("ident"), "--embedding-provider", "hash")
    wait_for_channel(srv.data_dir)
    keys = {
        "bot": create(srv.data_dir, "--agent", "key-bot")["raw_key"],
        "org": create(srv.data_dir, "--role", "admin")["raw_key"],
    }
    yield srv, keys
    srv.stop()


def test_with_a_key_the_keys_agent_everywhere(keyed) -> None:  # noqa: ANN001
    srv, keys = keyed
    sql(srv, "SELECT * FROM store_memory('heron accounts', wait := true)", keys["bot"])
    assert sql(srv, "SELECT agent_id FROM whoami()", keys["bot"]) == [("key-bot",)]
    # whoami says the same over REST and MCP
    assert rest(srv, "/v1/whoami", keys["bot"])["agent_id"] == "key-bot"
    me = HttpAgent(srv, Authorization=f"ApiKey {keys['bot']}").data("whoami", {})
    assert (me[0] if isinstance(me, list) else me)["agent_id"] == "key-bot"
    by_key = HttpAgent(srv, Authorization=f"ApiKey {keys['bot']}")
    assert [h["content"] for h in by_key.data("search_memory", {"query": "heron"})] == [
        "heron accounts"
    ]
    with StdioAgent(srv, None, "--api-key", keys["bot"]) as agent:
        agent.initialize()
        hits = agent.data("search_memory", {"query": "heron"})
        assert [h["content"] for h in hits] == ["heron accounts"]
    assert found(rest(srv, MEMORY + "/search", keys["bot"], query="heron"), "heron") == {"key-bot"}
    # An organisation key that names no agent is the default agent, on every interface.
    assert sql(srv, "SELECT agent_id FROM whoami()", keys["org"]) == [("default",)]
    sql(srv, "SELECT * FROM store_memory('crane budget', wait := true)", keys["org"])
    by_org = HttpAgent(srv, Authorization=f"ApiKey {keys['org']}")
    assert [h["content"] for h in by_org.data("search_memory", {"query": "crane"})] == [
        "crane budget"
    ]
    hits = rest(srv, MEMORY + "/search", keys["org"], query="crane", agent_id="default")
    assert found(hits, "crane") == {"default"}
    # The agent key cannot name another agent anywhere.
    with pytest.raises(psycopg.OperationalError, match="bound to agent 'key-bot'"):
        sql(srv, "SELECT 1", keys["bot"], agent="default")
    spoof = HttpAgent(srv, "default", Authorization=f"ApiKey {keys['bot']}")
    assert spoof.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})[0] == 403
