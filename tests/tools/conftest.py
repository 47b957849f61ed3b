"""The real third-party tools, installed by `.ci/run` from `.ci/tools/<tool>.txt` into
`.venv-tools/<tool>`, driven against a real hatiproxy process."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL_VENVS = ROOT / ".venv-tools"


def tool_program(tool: str, program: str = "python") -> Path:
    """A program of a tool's venv; a missing venv fails the test (CI never skips)."""
    path = TOOL_VENVS / tool / "bin" / program
    if not path.exists():
        pytest.fail(f"{path} is missing: `bash .ci/run` installs .ci/tools/{tool}.txt there")
    return path
