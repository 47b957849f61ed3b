"""Staging directories and atomic publication of model directories.

A model directory only ever appears by renaming a complete staging directory next to it,
so readers see the old model or the new one, never a half-written one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def staging_dir(parent: Path, name: str) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=parent))
    os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; an installed model should be readable
    return tmp


def publish_dir(tmp: Path, dst: Path) -> Path:
    """Move a complete staging directory to `dst`, replacing any previous version."""
    if dst.exists():
        old = dst.with_name(f".{dst.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        dst.rename(old)
        tmp.rename(dst)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(dst)
    return dst
