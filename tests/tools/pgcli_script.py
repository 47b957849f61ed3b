"""Run by tests/tools/test_pgcli.py with pgcli's own venv: pgcli's completion refresh
(every catalog query it sends on connect, on a connection of its own) and the completions
a user then gets. Prints one JSON line."""

from __future__ import annotations

import json
import sys

from pgcli.completion_refresher import CompletionRefresher
from pgcli.pgexecute import PGExecute
from pgspecial.main import PGSpecial
from prompt_toolkit.document import Document


def complete(completer, text: str, at: int | None = None) -> list[str]:
    """What pgcli offers with the cursor at `at` (the end by default)."""
    document = Document(text, len(text) if at is None else at)
    return [c.text for c in completer.get_completions(document, None)]


def main(port: int, schema: str) -> None:
    executor = PGExecute("hatidata", "x", None, "127.0.0.1", port, None)
    done = []
    # The refresh pgcli runs in a background thread on connect, here in the foreground.
    CompletionRefresher()._bg_refresh(executor, PGSpecial(), done.append, settings={})
    completer = done[0]
    out = {
        "schema_completions": complete(completer, "SELECT * FROM "),
        "tables": complete(completer, f"SELECT * FROM {schema}."),
        "columns": complete(completer, f"SELECT b. FROM {schema}.books b", 9),
        "schemas": sorted(completer.dbmetadata["tables"]),
        "functions": sorted(completer.dbmetadata["functions"].get("public", {})),
        "views": sorted(completer.dbmetadata["views"].get(schema, {})),
        "fks": [
            (fk.childtable, fk.childcolumn, fk.parenttable, fk.parentcolumn)
            for cols in completer.dbmetadata["tables"].get(schema, {}).get("books", {}).values()
            for fk in cols.foreignkeys
        ],
        "join": complete(completer, f"SELECT * FROM {schema}.books b JOIN {schema}."),
    }
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
