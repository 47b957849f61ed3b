"""node-postgres (`pg` from npm): tests/node/client.js run against the shared server."""

from __future__ import annotations

import subprocess
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent.parent / "node"


def test_node_postgres(server) -> None:
    if not (NODE_DIR / "node_modules" / "pg").is_dir():  # first run on a fresh checkout
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300
        )
    r = subprocess.run(
        ["node", "client.js", str(server.port)],
        cwd=NODE_DIR, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.startswith("ok "), r.stdout
    assert int(r.stdout.split()[1]) >= 25
