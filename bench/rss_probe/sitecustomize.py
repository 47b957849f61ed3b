"""Debug-only probe for bench/rss.py --probe FILE: a thread inside the server that
writes, every 30 s, one JSON line of where its memory is (not part of the product).

Python imports `sitecustomize` at start from its path, so rss.py puts this folder first
on the server's PYTHONPATH. Each line: seconds since start, RSS and threads
(/proc/self/status), glibc malloc (`mallinfo2`, KiB: `arena` heap size, `used` handed
out, `free` held free, `mmap` chunks mapped on their own), DuckDB's jemalloc
(`stats.*`, KiB, via `duckdb_je_mallctl`), `duckdb_memory()` per database file (KiB by
tag), pyarrow's pool and Python's allocated blocks.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

OUT = os.environ.get("RSS_PROBE_OUT", "")
OPENED: dict[str, Any] = {}  # database path -> the first connection opened on it


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks")
        + ("uordblks", "fordblks", "keepcost")
    ]


def _jemalloc() -> Any:
    import duckdb

    site = os.path.dirname(os.path.dirname(duckdb.__file__))
    fn = ctypes.CDLL(glob.glob(os.path.join(site, "_duckdb*.so"))[0]).duckdb_je_mallctl
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    fn.argtypes += [ctypes.c_size_t]
    return fn


def _je_stats(fn: Any) -> dict[str, int]:
    epoch, size = ctypes.c_uint64(1), ctypes.c_size_t(8)
    fn(b"epoch", ctypes.byref(epoch), ctypes.byref(size), ctypes.byref(epoch), 8)
    out = {}
    for key in ("allocated", "active", "resident", "mapped", "retained"):
        value, size = ctypes.c_size_t(0), ctypes.c_size_t(8)
        if fn(f"stats.{key}".encode(), ctypes.byref(value), ctypes.byref(size), None, 0) == 0:
            out[key] = value.value >> 10
    return out


def _sample(libc: Any, je: Any, cursors: dict[str, Any], t0: float) -> dict[str, Any]:
    rec: dict[str, Any] = {"t": round(time.monotonic() - t0)}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS", "RssAnon", "Threads")):
            key, value = line.split(":")
            rec[key] = int(value.split()[0])
    m = libc.mallinfo2()
    rec["glibc"] = {
        "arena": m.arena >> 10, "used": m.uordblks >> 10, "free": m.fordblks >> 10,
        "mmap": m.hblkhd >> 10,
    }  # fmt: skip
    rec["jemalloc"] = _je_stats(je)
    for path, con in list(OPENED.items()):
        cursors.setdefault(os.path.basename(path), con.cursor())
    rec["duckdb"] = {
        name: dict(cur.execute("SELECT tag, memory_usage_bytes >> 10 FROM duckdb_memory()"
                               " WHERE memory_usage_bytes > 0").fetchall())
        for name, cur in cursors.items()
    }  # fmt: skip
    import pyarrow

    rec["arrow_kib"] = pyarrow.total_allocated_bytes() >> 10
    rec["py_blocks"] = sys.getallocatedblocks()
    return rec


def _run() -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    je = _jemalloc()
    cursors: dict[str, Any] = {}
    t0 = time.monotonic()
    while True:
        time.sleep(30)
        try:
            rec = _sample(libc, je, cursors, t0)
        except Exception as exc:  # noqa: BLE001 - a probe never stops the server
            rec = {"error": repr(exc)}
        with open(OUT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def _record_connections() -> None:
    import duckdb

    connect = duckdb.connect

    def recording(database: str = ":memory:", *args: Any, **kwargs: Any) -> Any:
        con = connect(database, *args, **kwargs)
        if database not in (":memory:", "") and str(database) not in OPENED:
            OPENED[str(database)] = con
        return con

    duckdb.connect = recording


if OUT and b"serve" in Path("/proc/self/cmdline").read_bytes().split(b"\0"):
    _record_connections()
    threading.Thread(target=_run, name="rss-probe", daemon=True).start()
