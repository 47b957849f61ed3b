"""The local admin channel: how `hatiproxy keys` finds the server running on a data directory.

At start the server writes `<data_dir>/hatiproxy-admin.json` (mode 0600) with its pid,
the database it serves, a loopback URL and a random token. A request with that token on
that URL acts as the server superuser, so only the OS user who can read the file (the
owner of the data directory) can use it. The server removes the file when it stops; a
file left behind by a killed server is stale: its pid is gone or its URL does not answer.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

FILE_NAME = "hatiproxy-admin.json"
TOKEN_PREFIX = "hpadm_"


@dataclass(frozen=True)
class Channel:
    pid: int
    url: str  # http://127.0.0.1:PORT, loopback only
    token: str
    database: str  # the database file the server serves (or ':memory:')
    wire: str  # host:port of the Postgres wire listener, for messages

    @staticmethod
    def new_token() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)


def path_in(data_dir: str | Path) -> Path:
    return Path(data_dir) / FILE_NAME


def write(data_dir: str | Path, channel: Channel) -> Path:
    """Write the channel file readable by its owner only (atomically: never half a file)."""
    target = path_in(data_dir)
    tmp = target.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask cannot widen it, an old file's mode cannot stay
        os.write(fd, json.dumps(asdict(channel)).encode())
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return target


def read(data_dir: str | Path) -> Channel | None:
    """The channel file of data_dir, or None when there is none or it is garbled;
    PermissionError when it belongs to another OS user."""
    try:
        data = json.loads(path_in(data_dir).read_text())
        return Channel(int(data["pid"]), data["url"], data["token"], data["database"], data["wire"])
    except FileNotFoundError:
        return None
    except PermissionError:
        raise  # another OS user's server: the caller says so
    except (OSError, ValueError, KeyError, TypeError):
        return None  # half-written or foreign: as good as none


def remove(data_dir: str | Path, token: str) -> None:
    """Remove the channel file if it is still this server's (another may have replaced it)."""
    try:
        found = read(data_dir)
    except PermissionError:
        return
    if found is not None and secrets.compare_digest(found.token, token):
        path_in(data_dir).unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, though not ours
    return True
