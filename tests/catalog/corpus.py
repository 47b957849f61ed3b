"""Reads the client query corpus (tests/catalog/client_queries/*.sql).

Entry format: comment lines `-- query: <name>`, optional `-- params: <JSON list>` and
`-- reason: <why it fails>` (pending.sql only), then the SQL exactly as the client
sent it, then a line `-- ====`. `{{oid:NAME}}` stands for the oid of relation NAME.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CORPUS_DIR = Path(__file__).parent / "client_queries"
SEPARATOR = "-- ===="
_OID = re.compile(r"\{\{oid:([A-Za-z0-9_]+)\}\}")


@dataclass(frozen=True)
class Entry:
    file: str
    name: str
    sql: str
    params: tuple[object, ...] = ()
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.file}:{self.name}"

    def resolved(self, oid_of: Callable[[str], int]) -> tuple[str, list[object]]:
        """SQL and params with `{{oid:NAME}}` replaced; numeric params become ints."""
        sql = _OID.sub(lambda m: str(oid_of(m[1])), self.sql)
        params: list[object] = []
        for p in self.params:
            if isinstance(p, str):
                p = _OID.sub(lambda m: str(oid_of(m[1])), p)
                if re.fullmatch(r"-?\d+", p):
                    p = int(p)
                elif re.fullmatch(r"\{-?\d+(,-?\d+)*\}", p):  # int array, as the wire decodes it
                    p = [int(x) for x in p[1:-1].split(",")]
            params.append(p)
        return sql, params


def parse(path: Path) -> list[Entry]:
    entries: list[Entry] = []
    for chunk in path.read_text(encoding="utf-8").split(SEPARATOR + "\n"):
        name, params, reason, body, origin = "", (), "", [], path.name
        for line in chunk.splitlines():
            if line.startswith("-- query: "):
                name = line[len("-- query: ") :].strip()
            elif line.startswith("-- params: "):
                params = tuple(json.loads(line[len("-- params: ") :]))
            elif line.startswith("-- from: "):
                origin = line[len("-- from: ") :].strip()
            elif line.startswith("-- reason: "):
                reason = line[len("-- reason: ") :].strip()
            elif name:
                body.append(line)
        sql = "\n".join(body).strip()
        if name and sql:
            entries.append(Entry(origin, name, sql, params, reason))
    return entries


PENDING_HEADER = """\
-- Captured client queries that still FAIL when run through transpile() alone, each with
-- the reason (test_corpus.py asserts they still fail). `-- from:` names the client
-- file the entry belongs to; move an entry back there once it passes.

"""


def header(path: Path) -> str:
    """The comment block at the top of a corpus file (kept when entries move)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("-- query: "):
            break
        lines.append(line)
    return "".join(lines)


def load(include_pending: bool = False) -> list[Entry]:
    out: list[Entry] = []
    for path in sorted(CORPUS_DIR.glob("*.sql")):
        if (path.name == "pending.sql") == include_pending:
            out.extend(parse(path))
    return out
