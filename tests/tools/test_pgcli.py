"""pgcli 4 (PyPI, pinned in .ci/tools/pgcli.txt) against a real server: its backslash
commands as a user types them (`pgcli -f`), and the completion refresh it runs on
connect (every catalog query of pgcli's PGExecute, run by tests/tools/pgcli_script.py
in pgcli's venv), then the completions it offers."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.conftest import ServerProcess, psql_command
from tests.tools.conftest import tool_program

HERE = Path(__file__).resolve().parent

# A schema of its own: the test shares the session's server with other tests.
SCHEMA = """
CREATE SCHEMA pgcli_demo;
CREATE TABLE pgcli_demo.authors (id serial PRIMARY KEY, name text NOT NULL);
CREATE TABLE pgcli_demo.books (id serial PRIMARY KEY,
    author_id int REFERENCES pgcli_demo.authors(id), title text, price numeric(8,2));
CREATE INDEX books_title ON pgcli_demo.books (title);
CREATE VIEW pgcli_demo.cheap AS SELECT * FROM pgcli_demo.books WHERE price < 10;
INSERT INTO pgcli_demo.authors (name) VALUES ('Ursula');
"""

COMMANDS = """\\dt pgcli_demo.*
\\d pgcli_demo.books
\\d pgcli_demo.authors
\\dn
\\df whoami
SELECT name FROM pgcli_demo.authors;
"""


def test_pgcli_commands_and_completion_refresh(server: ServerProcess, tmp_path: Path) -> None:
    psql_command(server, SCHEMA)
    script = tmp_path / "commands.sql"
    script.write_text(COMMANDS)
    r = subprocess.run(
        [str(tool_program("pgcli", "pgcli")), "-h", server.host, "-p", str(server.port),
         "-U", "x", "-d", "hatidata", "--less-chatty", "-f", str(script)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    refresh = subprocess.run(
        [str(tool_program("pgcli")), str(HERE / "pgcli_script.py"), str(server.port),
         "pgcli_demo"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "error" not in out.lower(), out
    # \dt: the tables; \d books: columns, types, default, indexes and the foreign key
    assert "| pgcli_demo | authors | table |" in out and "| pgcli_demo | books   | table |" in out
    assert "| price     | numeric(8,2) |" in out, out
    assert "nextval('pgcli_demo.books_id_seq'::regclass)" in out
    assert '"books_pkey" PRIMARY KEY, btree (id)' in out and '"books_title" btree (title)' in out
    assert '"books_author_id_fkey" FOREIGN KEY (author_id) REFERENCES pgcli_demo.authors(id)' in out
    assert 'TABLE "pgcli_demo.books" CONSTRAINT "books_author_id_fkey"' in out  # Referenced by
    # \dn: column widths depend on the other schemas in the shared server
    assert re.search(r"\| pgcli_demo +\|", out) and re.search(r"\| public +\|", out), out
    assert "| public | whoami |" in out  # \df
    assert "| Ursula |" in out
    assert refresh.returncode == 0, refresh.stderr
    got = json.loads(refresh.stdout.strip().splitlines()[-1])
    assert {"authors", "books", "cheap"} <= set(got["tables"])  # FROM pgcli_demo.<tab>
    assert got["columns"] == ["author_id", "id", "price", "title"]  # SELECT b.<tab>
    assert got["views"] == ["cheap"]
    assert got["fks"] == [["books", "author_id", "authors", "id"]]
    assert got["join"][0] == "authors ON authors.id = b.author_id"  # JOIN <tab> by the key
    assert "whoami" in got["functions"] and "store_memory" in got["functions"]
    assert {"public", "pgcli_demo", "pg_catalog"} <= set(got["schemas"])
    assert "pgcli_demo" in got["schema_completions"]  # SELECT * FROM <tab>
