"""Every SQL example in README.md runs against a real server with the default model and
answers what the README shows.

The README's conventions, checked here:
- every ```sql block runs, top to bottom, on one connection to one fresh server (an
  in-memory database and the offline default model, all-MiniLM-L6-v2, converted from its
  PyPI package at start, as a new user's first `hatiproxy serve` does);
- a statement ends with `;` at the end of a line;
- a ```text block right after a ```sql block (blank lines between at most) is the result
  of the block's last statement as psql prints it: a header, a dashed line, rows with
  `|` between cells, `(n rows)`. Cells are compared as text, except that numbers may
  differ by one unit in their last shown decimal;
- a block that is not meant to run (a syntax sketch) has
  `<!-- readme-sql: not run: <why> -->` on the line above its fence; at most two may.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

ROOT = Path(__file__).resolve().parent.parent
NOT_RUN = re.compile(r"^<!-- readme-sql: not run: (.+\S) -->$")
ROWS = re.compile(r"^\((\d+) rows?\)$")
NUMBER = re.compile(r"^-?\d+(?:\.(\d+))?$")


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    sql: str
    expected: list[str] | None = None  # the following ```text block's lines
    not_run: str | None = None  # why, when marked


def blocks(text: str) -> tuple[list[Block], list[int]]:
    """The README's ```sql blocks with their expected output, and the lines of ```text
    blocks that follow no sql block."""
    lines = text.splitlines()
    found: list[Block] = []
    orphans: list[int] = []
    i = 0
    while i < len(lines):
        info = lines[i][3:].strip() if lines[i].startswith("```") else None
        if info is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        body = lines[i + 1 : end]
        if info == "sql":
            marker = NOT_RUN.match(lines[i - 1]) if i > 0 else None
            found.append(Block(i + 1, "\n".join(body), not_run=marker and marker[1]))
        elif info == "text":
            previous = next((ln for ln in reversed(lines[:i]) if ln.strip()), "")
            if found and previous == "```" and found[-1].expected is None:
                found[-1].expected = body
            else:
                orphans.append(i + 1)
        i = end + 1
    return found, orphans


README_BLOCKS, ORPHAN_OUTPUTS = blocks((ROOT / "README.md").read_text())


def statements(sql: str) -> list[str]:
    out, current = [], []
    for line in sql.splitlines():
        current.append(line)
        if line.rstrip().endswith(";"):
            out.append("\n".join(current).strip())
            current = []
    rest = "\n".join(current).strip()
    assert not rest, f"a statement does not end with ';' at the end of a line: {rest!r}"
    return out


def parse_table(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """psql's aligned output -> (column names, rows of cell texts)."""
    assert len(lines) >= 3, f"not a psql table: {lines}"
    header = [c.strip() for c in lines[0].split("|")]
    assert set(lines[1].strip()) <= set("-+"), f"no dashed line under the header: {lines[1]!r}"
    count = ROWS.match(lines[-1].strip())
    assert count, f"the table must end with '(n rows)': {lines[-1]!r}"
    rows = [[c.strip() for c in ln.split("|")] for ln in lines[2:-1]]
    assert int(count[1]) == len(rows), f"{lines[-1]} but {len(rows)} rows shown"
    return header, rows


def same_cell(shown: str, got: str | None) -> bool:
    got = "" if got is None else got  # psql shows NULL as nothing
    number = NUMBER.match(shown)
    if number is None or NUMBER.match(got) is None:
        return shown == got
    unit = 10.0 ** -len(number[1] or "")
    return abs(float(shown) - float(got)) <= unit + 1e-9


def result_table(cur: psycopg.Cursor) -> tuple[list[str], list[list[str | None]]]:
    """Column names and the server's text for every cell, as psql would print them."""
    assert cur.description is not None, "the statement returned no rows to compare"
    names = [d.name for d in cur.description]
    res = cur.pgresult
    assert res is not None
    rows = [
        [None if (v := res.get_value(r, c)) is None else v.decode() for c in range(res.nfields)]
        for r in range(res.ntuples)
    ]
    return names, rows


@pytest.fixture(scope="module")
def readme_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A new user's server: fresh data directory, the default embedding setup."""
    env = {
        "HATIDATA_EMBEDDING_PROVIDER": "onnx",  # never the hash test vectors
        "HATIDATA_EMBEDDING_MODEL": "",  # the default choice
        "HATIDATA_MODEL_DIR": "",  # <data_dir>/models, empty: the default is converted
        "HATIDATA_EMBEDDING_PRECISION": "fp32",
    }
    srv = start_server(tmp_path_factory.mktemp("readme"), "--database", ":memory:", env=env)
    yield srv
    srv.stop()


def test_readme_sql_conventions() -> None:
    assert len(README_BLOCKS) >= 4
    assert not ORPHAN_OUTPUTS, f"```text blocks that follow no sql block: lines {ORPHAN_OUTPUTS}"
    skipped = [b for b in README_BLOCKS if b.not_run]
    assert len(skipped) <= 2, f"too many README SQL blocks not run: {[b.line for b in skipped]}"
    headline = README_BLOCKS[0]
    assert "semantic_match(content, 'customer wants a refund')" in headline.sql
    assert headline.expected is not None and not headline.not_run
    for block in README_BLOCKS:
        statements(block.sql)  # each ends with ';'
        if block.expected is not None:
            parse_table(block.expected)


def test_readme_sql_examples_answer_as_shown(readme_server: ServerProcess) -> None:
    log = readme_server.log()
    assert "embedding model: all-minilm-l6-v2 (384 dims" in log, log
    assert "semantic_match default threshold 0.33" in log
    ran = 0
    with psycopg.connect(readme_server.dsn, autocommit=True) as conn:
        for block in README_BLOCKS:
            if block.not_run:
                continue
            where = f"README.md line {block.line}"
            cur = conn.cursor()
            for sql in statements(block.sql):
                try:
                    cur.execute(sql)
                except psycopg.Error as exc:
                    pytest.fail(f"{where}: {sql!r} failed: {exc.sqlstate} {exc}")
                ran += 1
            if block.expected is None:
                continue
            names, rows = parse_table(block.expected)
            got_names, got_rows = result_table(cur)
            shown = "\n".join(block.expected)
            answered = "\n".join(" | ".join(str(v) for v in row) for row in got_rows)
            assert got_names == names, f"{where}: columns {got_names}, README shows {names}"
            assert len(got_rows) == len(rows) and all(
                len(g) == len(s) and all(map(same_cell, s, g))
                for s, g in zip(rows, got_rows, strict=True)
            ), f"{where}: the server answered\n{answered}\nthe README shows\n{shown}"
    assert ran >= 10
