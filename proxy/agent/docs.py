"""The README's table of agent functions, rendered from their declarations.

`markdown_table()` is the table; README.md holds it between the two markers below,
tests/test_readme.py checks that it is the rendered one, and
`python -m proxy.agent.docs` writes it there after a declaration changes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from proxy.agent.all_functions import group_of, in_order, load_functions
from proxy.core.registry import AgentFunction, Param, Registry

BEGIN = (
    "<!-- agent functions: generated from their declarations by `python -m proxy.agent.docs` -->"
)
END = "<!-- end of agent functions -->"
README = Path(__file__).resolve().parents[2] / "README.md"


def markdown_table(registry: Registry | None = None) -> str:
    """One row per function, by group: what it does, its arguments, result columns, scope."""
    fns = in_order(load_functions() if registry is None else registry)
    rows = ["| group | function | arguments | returns | scope |", "|---|---|---|---|---|"]
    previous = None
    for fn in fns:
        group = group_of(fn)
        cells = [
            group if group != previous else "",
            f"`{fn.name}`: {fn.doc}",
            "<br>".join(_param(p) for p in fn.params) or "(none)",
            ", ".join(f"`{c}`" for c, _ in fn.columns),
            _scope(fn),
        ]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        previous = group
    return "\n".join(rows)


def _param(p: Param) -> str:
    head = f"`{p.name}` {p.type}"
    if p.json_shape:
        head += f" {p.json_shape}"
    if not p.required:
        head += f" = `{_literal(p.default)}`"
    notes = [p.description]
    if p.enum:
        notes.append("one of " + ", ".join(f"`{v}`" for v in p.enum))
    if p.minimum is not None or p.maximum is not None:
        notes.append(_range(p.minimum, p.maximum))
    return f"{head}: " + "; ".join(notes)


def _literal(value: Any) -> str:
    """A default as SQL would write it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _range(low: float | None, high: float | None) -> str:
    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    if low is not None and high is not None:
        return f"{num(low)} to {num(high)}"
    return f">= {num(low)}" if low is not None else f"<= {num(high)}"  # type: ignore[arg-type]


def _scope(fn: AgentFunction) -> str:
    out = f"`{fn.scope}`" if fn.scope else "any caller"
    if fn.writes:
        out += ", writes"
    if fn.mcp is not None:
        out += ", MCP tool"
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readme_table(text: str) -> str:
    """The table as README.md has it (between BEGIN and END)."""
    start = text.index(BEGIN) + len(BEGIN)
    return text[start : text.index(END, start)].strip("\n")


def write_readme(path: Path = README) -> bool:
    """Put the rendered table into the README; whether it changed."""
    text = path.read_text()
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END, start)
    new = text[:start] + "\n" + markdown_table() + "\n" + text[end:]
    if new != text:
        path.write_text(new)
    return new != text


if __name__ == "__main__":
    print("README.md updated" if write_readme() else "README.md already up to date")
    sys.exit(0)
