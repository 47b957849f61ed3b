"""Maintenance: move corpus entries between the client files and pending.sql.

Run ``/opt/hv/bin/python tests/catalog/triage.py`` after the transpiler changes: entries
that now pass through transpile() go back to their client file, newly failing ones go
to pending.sql with the error as the reason.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).parent))

import corpus  # noqa: E402
import missing_rewrites as mr  # noqa: E402
from runner import catalog_cursor, run, transpiled  # noqa: E402


def needed_rewrites(sql: str) -> list[str]:
    """Which of missing_rewrites' R1-R6 change this query (before or after transpiling)."""
    before = {"R1": mr.r1_strip_pg_catalog, "R3": mr.r3_oid_array, "R4": mr.r4_srf_alias,
              "R5": mr.r5_array_literal}  # fmt: skip
    found, text = [], sql
    for name, fn in before.items():  # cumulative, in the order with_missing_rewrites uses
        changed = fn(text)
        if changed != text:
            found.append(name)
        text = changed
    try:
        out = transpiled(text)
    except Exception:
        return found
    found += [name for name, fn in (("R2", mr.r2_information_schema), ("R6", mr.r6_reg_oid))
              if any(fn(s) != s for s in out)]  # fmt: skip
    return sorted(found)


def render(entry: corpus.Entry, reason: str = "", origin: bool = False) -> str:
    lines = [f"-- query: {entry.name}"]
    if origin:
        lines.append(f"-- from: {entry.file}")
    if reason:
        lines.append("-- reason: " + " ".join(reason.split())[:300])
    if entry.params:
        lines.append("-- params: " + json.dumps(list(entry.params)))
    return "\n".join(lines + [entry.sql, corpus.SEPARATOR, ""])


def main() -> None:
    cur = catalog_cursor()
    by_file: dict[str, list[str]] = {}
    pending: list[str] = []
    for entry in corpus.load() + corpus.load(include_pending=True):
        try:
            run(cur, entry, transpiled)
            by_file.setdefault(entry.file, []).append(render(entry))
        except Exception as exc:  # the reason is the failure itself
            needs = ", ".join(needed_rewrites(entry.sql)) or "none known"
            reason = f"needs {needs}; fails with {type(exc).__name__}: {exc}"
            pending.append(render(entry, reason, origin=True))
    for path in sorted(corpus.CORPUS_DIR.glob("*.sql")):
        if path.name == "pending.sql":
            continue
        head = corpus.header(path)
        path.write_text(head + "".join(by_file.get(path.name, [])), encoding="utf-8")
    (corpus.CORPUS_DIR / "pending.sql").write_text(
        corpus.PENDING_HEADER + "".join(pending), encoding="utf-8"
    )
    print(f"{sum(map(len, by_file.values()))} passing, {len(pending)} pending")


if __name__ == "__main__":
    main()
