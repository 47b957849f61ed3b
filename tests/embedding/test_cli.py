"""`hatiproxy model ...` as a standalone module and as a sub-command of a parent parser."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from proxy.cli.model import add_model_commands, run

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    for var in ("HATIDATA_EMBEDDING_MODEL", "HATIDATA_MODEL_BASE_URL"):
        full_env.pop(var, None)
    # Through the installed `hatiproxy` console script, as users run it.
    return subprocess.run(
        [str(Path(sys.executable).with_name("hatiproxy")), "model", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_hatiproxy_model_install_default_list_verify(tmp_path, minilm_package_dir):
    env = {"HATIDATA_MODEL_DIR": str(tmp_path / "models")}
    out = cli("list", env=env)
    assert out.returncode == 0
    assert "bge-small-en-v1.5" in out.stdout and "available" in out.stdout
    assert "*" not in out.stdout.split("(*")[0]  # nothing installed: no default
    bad = cli("verify", env=env)
    assert bad.returncode == 1 and "no models installed" in bad.stdout
    assert cli("install-default", env=env).returncode == 0
    out = cli("list", env=env)
    assert "* all-minilm-l6-v2" in out.stdout and "installed" in out.stdout
    ok = cli("verify", "all-minilm-l6-v2", env=env)
    assert ok.returncode == 0 and ok.stdout.startswith("ok ")


def test_hatiproxy_model_errors_are_actionable(tmp_path):
    env = {
        "HATIDATA_MODEL_DIR": str(tmp_path / "models"),
        "HATIDATA_MODEL_BASE_URL": "http://127.0.0.1:9",
    }
    out = cli("pull", "no-such-model", env=env)
    assert out.returncode == 1 and "unknown model" in out.stderr and "bge-small" in out.stderr
    out = cli("verify", "bge-small-en-v1.5", env=env)
    assert out.returncode == 1 and "hatiproxy model pull bge-small-en-v1.5" in out.stderr


def test_add_model_commands_hooks_into_a_parent_parser(tmp_path, tiny_model_dir, capsys):
    parser = argparse.ArgumentParser(prog="hatiproxy")
    sub = parser.add_subparsers(dest="command", required=True)
    add_model_commands(sub)
    args = parser.parse_args(
        [
            "model",
            "--model-dir",
            str(tmp_path / "m"),
            "import",
            str(tiny_model_dir),
            "--name",
            "tiny2",
        ]
    )
    assert args.command == "model"
    assert run(args) == 0
    assert "imported" in capsys.readouterr().out
    args = parser.parse_args(["model", "--model-dir", str(tmp_path / "m"), "verify"])
    assert run(args) == 0
    assert "ok   tiny2" in capsys.readouterr().out


def test_model_commands_take_data_dir_like_serve(tmp_path, tiny_model_dir):
    """`--data-dir` after the sub-command as well as before it; models in <data dir>/models."""
    data = tmp_path / "data"
    env = {"HATIDATA_MODEL_DIR": "", "HATIDATA_DATA_DIR": str(tmp_path / "elsewhere")}
    out = cli("list", "--data-dir", str(data), env=env)
    assert out.returncode == 0, out.stderr
    assert f"model directory: {data / 'models'}" in out.stdout
    imported = cli(
        "import", str(tiny_model_dir), "--name", "tiny3", "--data-dir", str(data), env=env
    )
    assert imported.returncode == 0, imported.stderr
    assert (data / "models" / "tiny3").is_dir()
    for args in (("list", "--data-dir", str(data)), ("--data-dir", str(data), "list")):
        out = cli(*args, env=env)
        assert out.returncode == 0, out.stderr
        assert "tiny3" in out.stdout and "installed" in out.stdout
    # without the flag: $HATIDATA_DATA_DIR, as for `serve`
    out = cli("list", env=env)
    assert f"model directory: {tmp_path / 'elsewhere' / 'models'}" in out.stdout
    assert "tiny3" not in out.stdout
