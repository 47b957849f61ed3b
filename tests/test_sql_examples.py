"""Golden examples in sql_examples/: one pytest case per .sql file.

Format and the stand-in embedding are described in sql_examples/README.md.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import duckdb_extensions
import pytest

from proxy.agent.all_functions import load_functions
from proxy.db import catalog
from proxy.embedding.registry import GENERIC_MATCH_THRESHOLD
from transpiler import Statement, TranspileError, transpile

load_functions()  # the agent examples need the server's agent function names

ROOT = Path(__file__).resolve().parent.parent / "sql_examples"
FIXTURE = (ROOT / "fixture.sql").read_text()
DIMS = 3
VOCAB = (
    {"bill", "billing", "invoice", "payment", "pay", "refund"},
    {"account", "login", "password", "auth"},
    {"shipping", "delivery", "package", "ships"},
)


def fake_embed(text: str) -> list[float]:
    """Deterministic 3-d stand-in for the model: word counts per vocabulary."""
    words = re.findall(r"[a-z]+", text.lower())
    vec = [0.01 + sum(w in vocab for w in words) for vocab in VOCAB]
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec]


@dataclass
class Example:
    path: Path
    sql: str
    dialect: str = "postgres"
    transpiled: list[str] = field(default_factory=list)
    rows: list[list] | None = None
    error: str | None = None


def load(path: Path) -> Example:
    lines = path.read_text().splitlines()
    example = Example(path=path, sql="")
    if lines and lines[0].startswith("-- dialect:"):
        example.dialect = lines[0].split(":", 1)[1].strip()
    section, body = "sql", []
    sections: dict[str, list[str]] = {}
    for line in lines:
        if line in ("-- transpiled:", "-- rows:") or line.startswith("-- error:"):
            sections[section] = body
            section, body = line[3:].split(":", 1)[0], []
            if section == "error":
                example.error = line.split(":", 1)[1].strip()
            continue
        body.append(line)
    sections[section] = body
    example.sql = "\n".join(sections["sql"])
    example.transpiled = [x for x in sections.get("transpiled", []) if x]
    if "rows" in sections:
        example.rows = [json.loads(x) for x in sections["rows"] if x.strip()]
    return example


def normalise(value):
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    return value


def connect() -> duckdb.DuckDBPyConnection:
    duckdb_extensions.import_extension("fts")
    con = duckdb.connect()
    con.execute("LOAD fts")
    con.create_function(
        "__HATI_EMBED__", fake_embed, ["VARCHAR"], f"FLOAT[{DIMS}]", side_effects=False
    )
    # semantic_match's default threshold: the stand-in embedding is no model the registry
    # knows, so the server would use the generic one.
    con.create_function(
        "__HATI_DEFAULT_THRESHOLD__", lambda: GENERIC_MATCH_THRESHOLD, [], "DOUBLE",
        side_effects=False,
    )  # fmt: skip
    # One statement at a time: the fts PRAGMA binds before earlier CREATEs would run.
    for part in FIXTURE.split(";\n"):
        if part.strip() and not all(x.startswith("--") for x in part.strip().splitlines()):
            con.execute(part)
    # The server's pg_catalog / information_schema layer, as every session sees it.
    catalog.install(con)
    return con


def run(statements: tuple[Statement, ...]) -> list[list]:
    """Execute like the server: bind text markers as vector parameters."""
    con = connect()
    rows: list = []
    for stmt in statements:
        if stmt.command is not None:
            continue
        params = [fake_embed(t) for t in stmt.bind_texts]
        cur = con.execute(stmt.bind_sql(stmt.param_count + 1), params or None)
        rows = cur.fetchall() if cur.description else []
    return json.loads(json.dumps(normalise(rows)))


EXAMPLES = sorted(ROOT.glob("*/*.sql"))


def test_at_least_sixty_examples() -> None:
    assert len(EXAMPLES) >= 60


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example(path: Path) -> None:
    example = load(path)
    if example.error is not None:
        with pytest.raises(TranspileError) as info:
            transpile(example.sql, dialect=example.dialect, vector_dims=DIMS)
        assert info.value.sqlstate == example.error
        assert info.value.position is not None
        return
    statements = transpile(example.sql, dialect=example.dialect, vector_dims=DIMS)
    assert [s.sql for s in statements] == example.transpiled
    if example.rows is not None:
        assert run(statements) == example.rows
