"""The README stays true: its configuration table and commands match the code."""

from __future__ import annotations

import re
from pathlib import Path

from proxy.agent import docs
from proxy.core import config

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_configuration_table_matches_settings() -> None:
    assert config.markdown_table() in README


def test_agent_function_table_is_rendered_from_the_declarations() -> None:
    # Regenerate with `python -m proxy.agent.docs` after changing a declaration.
    assert docs.readme_table(README) == docs.markdown_table()


def test_readme_commands_exist() -> None:
    assert "bash .ci/install && .venv/bin/hatiproxy serve" in README
    assert "bash .ci/run" in README
    ci = (ROOT / ".ci" / "run").read_text()
    # CI runs exactly the test command the README names.
    assert ".venv/bin/python -m pytest" in README
    assert ci.rstrip().endswith(".venv/bin/python -m pytest")


def test_every_setting_has_env_and_flag() -> None:
    cfg = config.load(None, {"HATIDATA_PORT": "6000", "HATIDATA_USERS": "a:b"})
    assert cfg.port == 6000
    assert cfg.effective_auth_method == "scram-sha-256"
    assert cfg.user_passwords == {"a": "b"}


def test_readme_names_exactly_the_sql_tools_of_mcp() -> None:
    """The MCP section lists the SQL tools by name; the agent tools come from the table."""
    from proxy.api.mcp.sql import SQL_TOOLS

    section = README.split("### MCP", 1)[1].split("\n## ", 1)[0]
    listed = section.split("the SQL tools", 1)[1].split("and every agent function", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == {t.name for t in SQL_TOOLS}
