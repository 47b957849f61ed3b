"""The layers of docs/ARCHITECTURE.md hold: import-linter's contracts (pyproject.toml) are
all kept, so a new upward import, a wire module that does I/O or a transpiler that
reaches into the server fails the build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "import-linter is a test dependency (pip install -e '.[test]')"
    return subprocess.run(
        [exe, "--no-cache", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_import_contracts_are_kept() -> None:
    out = lint_imports()
    assert out.returncode == 0, out.stdout + out.stderr
    assert " 0 broken" in out.stdout


def test_an_upward_import_breaks_a_contract(tmp_path: Path) -> None:
    """The check can fail: a copy of the tree where core imports the agent layer."""
    for name in ("proxy", "transpiler"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    names = tmp_path / "proxy" / "core" / "names.py"
    names.write_text(names.read_text() + "\nfrom proxy.agent import layer  # noqa\n")
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe
    out = subprocess.run(
        [exe, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode != 0
    assert "proxy.core.names -> proxy.agent.layer" in out.stdout
