"""glibc malloc settings for the server process, set before DuckDB, ONNX or numpy start
their threads.

Why: the server's RSS kept rising under a steady workload (bench/rss.py) while the
Python heap and DuckDB's own accounting stayed flat; the growth was free memory held
inside glibc's heaps (mallinfo2 `fordblks`, 25-40 MiB and rising). Two glibc defaults
cause it in a process like this one, where DuckDB allocates and frees 256 KiB buffer
blocks and Arrow/numpy buffers on many threads:

- The mmap threshold is dynamic: it starts at 128 KiB, and every time a chunk that
  came from mmap is freed it rises to that chunk's size (up to 32 MiB). After the first
  freed DuckDB block, every later block is carved from a heap, between small long-lived
  objects, and once freed leaves a hole the heap can never give back. Setting the
  threshold explicitly turns the dynamic rise off: chunks of at least `MMAP_THRESHOLD`
  are mapped and unmapped on their own, so freeing one returns it to the OS.
  Measured (bench/rss.py, 30 minutes): heap free space 1-2 MiB, flat, instead of 37-48 MiB.
- Trim threshold: a fixed mmap threshold also fixes the trim threshold at 128 KiB, so a
  heap gives back its top as soon as 128 KiB there are free, and the next allocation
  faults the same pages in again. A result stream allocates and frees a few MiB of
  numpy/Python buffers per batch below the mmap threshold: with 128 KiB, encoding
  lineitem rows (bench/transfer.py) spent a third of the server's CPU in page faults
  and munmap (binary COPY: 88k faults per 200k rows). `TRIM_THRESHOLD` keeps up to
  4 MiB free at the top of each heap (at most arenas x 4 MiB): 4.8k faults, encode
  CPU -25 % (binary rows) to -48 % (binary COPY).
- Arenas: glibc gives a thread that meets contention a new arena, up to 8 per core,
  each with its own heap that fragments on its own and keeps its free memory. The
  server's threads (one per wire connection, DuckDB's, the model's) do little in
  malloc; `ARENAS_PER_CORE` per core (at least `MIN_ARENAS`) bounds how many heaps hold
  free memory.

Cost: a mapping per large chunk means more page faults (+35 % minor faults in an
in-process DuckDB mix of point reads, joins and sorts); its CPU time stayed within the
noise (4.45 s vs 4.19 s mean of 3 runs each, load average 20-40).

- Thread cache (tcache): glibc keeps at most 7 freed chunks per size class per thread
  before a free goes to the arena's bins (its lock, coalescing, later consolidation).
  Planning one statement, DuckDB allocates and frees ~1,000 small objects (expression
  trees, plans), so most of its frees and the next statement's mallocs missed the cache:
  malloc and free were ~20 % of a point SELECT's instructions on its connection thread
  (callgrind, bench/instr_ab.py). `TCACHE_COUNT` chunks per size class serve them from
  the thread's cache. glibc reads the count only from GLIBC_TUNABLES when the process
  starts, so `hatiproxy serve` runs itself again (execve, the same pid) with it set.
  Bound: a thread's cache holds at most `TCACHE_COUNT` chunks of each of glibc's 64
  classes (16-1,032 bytes): 2.1 MiB in the worst case, freed when the thread ends.

An operator's own MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ /
GLIBC_TUNABLES
setting wins: nothing is changed for a setting given in the environment. Not glibc (musl,
macOS): nothing to do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys
from collections.abc import Mapping

log = logging.getLogger("hatiproxy.memory")

M_TRIM_THRESHOLD = -1  # glibc mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD = 128 * 1024  # glibc's own initial value, now fixed
TRIM_THRESHOLD = 4 * 1024 * 1024
ARENAS_PER_CORE = 2
MIN_ARENAS = 2
TCACHE_COUNT = 64
TCACHE_TUNABLE = "glibc.malloc.tcache_count"


def _given(name: str, tunable: str) -> bool:
    return name in os.environ or tunable in os.environ.get("GLIBC_TUNABLES", "")


def tune_malloc() -> dict[str, int]:
    """Apply the settings above (once, as early as possible); returns what was set."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
    except (OSError, AttributeError):
        return {}
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done: dict[str, int] = {}
    given = _given("MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold")
    if not given and mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD):
        done["mmap_threshold"] = MMAP_THRESHOLD
    given = _given("MALLOC_TRIM_THRESHOLD_", "glibc.malloc.trim_threshold")
    if not given and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD):
        done["trim_threshold"] = TRIM_THRESHOLD
    if not _given("MALLOC_ARENA_MAX", "glibc.malloc.arena_max"):
        arenas = max(MIN_ARENAS, ARENAS_PER_CORE * (os.cpu_count() or 1))
        if mallopt(M_ARENA_MAX, arenas):
            done["arena_max"] = arenas
    return done


def tcache_environment(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The environment that sets the thread cache size (see above), or None: not glibc,
    or set already (by the operator, or by the run this one was exec'd from)."""
    if sys.platform != "linux" or not _glibc():
        return None
    tunables = environ.get("GLIBC_TUNABLES", "")
    if TCACHE_TUNABLE in tunables:
        return None
    setting = f"{TCACHE_TUNABLE}={TCACHE_COUNT}"
    return {**environ, "GLIBC_TUNABLES": f"{tunables}:{setting}" if tunables else setting}


def exec_with_tcache() -> None:
    """Run this process again with the thread cache size set (it returns only when
    nothing is to be done). Call first thing: nothing done before survives the exec."""
    env = tcache_environment(os.environ)
    if env is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def _glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):
        return False
