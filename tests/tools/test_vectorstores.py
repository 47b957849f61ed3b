"""langchain-postgres PGVector and LlamaIndex PGVectorStore (pinned in
.ci/tools/vectorstores.txt) against a real server: store creation, add, similarity
search with scores, metadata filters (jsonb), delete. The script is
tests/tools/vectorstores_script.py, run in the vectorstores tool venv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import start_server
from tests.tools.conftest import tool_program

HERE = Path(__file__).resolve().parent


def _run(tmp_path: Path, which: str) -> dict:
    python = tool_program("vectorstores")
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        r = subprocess.run(
            [str(python), str(HERE / "vectorstores_script.py"), str(srv.port), which],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        srv.stop()
    assert r.returncode == 0, r.stderr[-4000:] + r.stdout
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_llamaindex_pgvectorstore(tmp_path: Path) -> None:
    out = _run(tmp_path, "llamaindex")
    assert out["retrieved"] == ["dogs bark", "the cat sat"]
    assert out["scores"] == [1.0, 1.0]  # MockEmbedding: one vector for every text
    assert out["filter_eq"] == ["dogs bark"]  # metadata_ ->> 'kind' = 'dog'
    assert out["filter_in"] == ["dogs bark", "the cat sat"]
    assert out["after_delete"] == ["dogs bark"]  # delete_ref_doc removed the cat


def test_langchain_pgvector(tmp_path: Path) -> None:
    out = _run(tmp_path, "langchain")
    assert out["ids"] == ["a", "b", "c"]
    assert out["search"][0] == "the cat sat"  # its own embedding is the nearest
    assert out["scored"][0] == ["dogs bark loudly", 0.0]  # cosine distance to itself
    assert out["filter_eq"] == ["a cat purrs", "the cat sat"]  # cmetadata @> / ->>
    assert out["filter_gte"] == ["a cat purrs", "dogs bark loudly"]
    assert out["filter_in"] == ["dogs bark loudly"]
    assert out["after_delete"] == ["a cat purrs", "the cat sat"]
    assert out["left_after_delete_collection"] == 0  # ON DELETE CASCADE carried out
