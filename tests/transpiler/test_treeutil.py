"""treeutil.nodes lists a tree as walk() does; treeutil.clone copies it as copy() does."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from sqlglot import exp
from sqlglot.errors import ParseError

from transpiler.dialects import DUCKDB, POSTGRES, SNOWFLAKE
from transpiler.treeutil import clone, nodes

EXAMPLES = Path(__file__).resolve().parents[2] / "sql_examples"
EXTRA = [
    "SELECT /* c1 */ a -- c2\n FROM t WHERE b = 1 /* c3 */",
    "SELECT x::int[3], CAST(y AS numeric(10, 2)), '[1,2]'::vector FROM t",
    "SELECT NVL(a, 0), IFF(b, 1, 2), v:path::string FROM t, LATERAL FLATTEN(input => c) f",
    "WITH r AS (SELECT 1) SELECT * FROM r JOIN s USING (id) ORDER BY 1 DESC NULLS LAST",
]


def trees() -> list[exp.Expr]:
    texts = EXTRA[:]
    for path in sorted(EXAMPLES.rglob("*.sql")):
        lines = path.read_text().split("-- transpiled:")[0].split("-- error:")[0]
        texts.append(lines.split("-- rows:")[0])
    out = []
    for text in texts:
        for reader in (POSTGRES, SNOWFLAKE):
            with contextlib.suppress(ParseError):
                out += [t for t in reader.parse(text) if t is not None]
    return out


TREES = trees()


@pytest.mark.parametrize("tree", TREES, ids=[str(i) for i in range(len(TREES))])
def test_nodes_is_walk_order(tree: exp.Expr) -> None:
    assert [id(n) for n in nodes(tree)] == [id(n) for n in tree.walk()]


@pytest.mark.parametrize("tree", TREES, ids=[str(i) for i in range(len(TREES))])
def test_clone_is_copy(tree: exp.Expr) -> None:
    copied, cloned = tree.copy(), clone(tree)
    assert cloned == copied
    assert DUCKDB.generate(cloned) == DUCKDB.generate(copied)
    originals = nodes(tree)
    for a, b, o in zip(nodes(copied), nodes(cloned), originals, strict=True):
        assert type(a) is type(b) and b is not o
        assert a.meta_get("start") == b.meta_get("start") and (a._meta or {}) == (b._meta or {})
        assert a.comments == b.comments
        assert a.arg_key == b.arg_key and a.index == b.index
        if b is not cloned:
            assert b.parent is not None and any(
                v is b or (isinstance(v, list) and any(x is b for x in v))
                for v in b.parent.args.values()
            )
