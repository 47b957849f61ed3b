"""Running `hatiproxy keys` as a user does: a subprocess, against a data directory."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from proxy.core import admin_channel
from tests.conftest import ROOT


def keys_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "proxy", "keys", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def create(data_dir: Path, *args: str) -> dict:
    """`keys create --json ...`: the key as printed, its secret in `raw_key`."""
    out = keys_cli(data_dir, "create", "--json", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def wait_for_channel(data_dir: Path, timeout: float = 30) -> admin_channel.Channel:
    """The admin channel file a started server writes once all its listeners answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = admin_channel.read(data_dir)
        if found is not None:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no admin channel file appeared in {data_dir}")
