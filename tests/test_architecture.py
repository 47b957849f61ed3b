"""Structure rules of the code base, checked over the source with `ast` (nothing is imported)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("proxy", "transpiler")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str, where: str) -> list[str]:
    """Where the module `source` (file `where`) uses another project module's underscore
    name: `from proxy.m import _x`, or `m._x` / `Name._x` where `m` / `Name` was imported
    from proxy or transpiler."""
    tree = ast.parse(source, filename=where)
    found: list[str] = []
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] not in PACKAGES:
                continue
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno}: from {node.module} import {alias.name}")
                else:
                    imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    imported.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and _private(node.attr)
        ):
            found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_private_imports_across_modules() -> None:
    """A module's underscore names are its own: another module that needs one gets a public
    name (or a small public function) instead of reaching in."""
    found = [
        use
        for package in PACKAGES
        for path in sorted((ROOT / package).glob("**/*.py"))
        for use in private_uses(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_private_uses_finds_both_forms() -> None:
    """The checker itself: both forms are reported; dunder names, public names and other
    packages' private names are not."""
    source = (
        "import json\n"
        "import proxy.wire.types as wt\n"
        "from proxy.core import names\n"
        "from proxy.core.names import _hidden, INTERNAL_SCHEMA\n"
        "x = wt._BASE_KIND, names._x, json._default_decoder, names.__name__, INTERNAL_SCHEMA\n"
    )
    assert private_uses(source, "probe.py") == [
        "probe.py:4: from proxy.core.names import _hidden",
        "probe.py:5: wt._BASE_KIND",
        "probe.py:5: names._x",
    ]
