"""The real third-party tools, installed by `.ci/run` from `.ci/tools/<tool>.txt` into
`.venv-tools/<tool>`, driven against a real hatiproxy process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
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


def run_tool_script(tool: str, script: Path, *args: str, timeout: float = 300) -> dict:
    """Run `script` with the python of `.venv-tools/<tool>`; the JSON its last line prints.
    A script prints what it did so far also when a step fails: the failure says which."""
    return run_program([str(tool_program(tool)), str(script), *args], timeout=timeout)


def run_program(command: list[str], timeout: float = 300) -> dict:
    """Run a tool program (a script's interpreter and arguments, or a built binary); the
    JSON its last line prints."""
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        name = " ".join(Path(part).name for part in command[:2])
        raise AssertionError(f"{name} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_on_postgres_and_hatiproxy(
    tool: str,
    script: Path,
    tmp_path: Path,
    args: Callable[[str, int, str, str], list[str]],
    binary: Path | None = None,
) -> tuple[dict, dict]:
    """The script's JSON against a throwaway PostgreSQL 15, then against a hatiproxy server
    (its log in the failure); `args(host, port, user, database)` is its command line. A
    compiled tool program (`binary`) runs instead of the script under the tool's python."""

    def run(*argv: str) -> dict:
        if binary is not None:
            return run_program([str(binary), *argv])
        return run_tool_script(tool, script, *argv)

    from tests.conftest import start_server
    from tests.differential.pgcluster import start_pg

    pg = start_pg()
    try:
        theirs = run(*args("127.0.0.1", pg.port, "postgres", "postgres"))
    finally:
        pg.stop()
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        ours = run(*args(srv.host, srv.port, "tester", "hatidata"))
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{srv.log()[-4000:]}") from None
    finally:
        srv.stop()
    return theirs, ours
