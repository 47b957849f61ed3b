"""EXPLAIN (FORMAT JSON) in PostgreSQL's shape, from DuckDB's JSON plan. Pure.

Plan viewers (pgAdmin, DBeaver, explain.dalibo.com, ORMs' explain helpers) read
PostgreSQL's form: `[{"Plan": {"Node Type": ..., "Plans": [...]}, "Execution Time": ms}]`.
DuckDB answers with its own (`[{"name": "HASH_JOIN", "children": [...], "extra_info":
{...}}]`, or a profile tree for EXPLAIN ANALYZE). The plan stays DuckDB's -- its
operators, named as PostgreSQL names the equivalent node where there is one (HASH_JOIN:
"Hash Join", SEQ_SCAN: "Seq Scan"), else by DuckDB's name ("Hnsw Index Scan");
projections, which PostgreSQL folds into the node below, are folded likewise. DuckDB
has no costs, so none are made up: "Plan Rows" is its estimated cardinality; with
ANALYZE "Actual Rows" and "Actual Total Time" (ms, the node and those below it) are
measured. DuckDB's own fields stay under "DuckDB" in each node.
"""

from __future__ import annotations

import json
from typing import Any

_NODE_TYPES = {
    "SEQ_SCAN": "Seq Scan",
    "TABLE_SCAN": "Seq Scan",
    "INDEX_SCAN": "Index Scan",
    "HASH_JOIN": "Hash Join",
    "NESTED_LOOP_JOIN": "Nested Loop",
    "BLOCKWISE_NL_JOIN": "Nested Loop",
    "CROSS_PRODUCT": "Nested Loop",
    "PIECEWISE_MERGE_JOIN": "Merge Join",
    "HASH_GROUP_BY": "Aggregate",
    "PERFECT_HASH_GROUP_BY": "Aggregate",
    "UNGROUPED_AGGREGATE": "Aggregate",
    "SIMPLE_AGGREGATE": "Aggregate",
    "STREAMING_WINDOW": "WindowAgg",
    "WINDOW": "WindowAgg",
    "ORDER_BY": "Sort",
    "TOP_N": "Limit",
    "LIMIT": "Limit",
    "STREAMING_LIMIT": "Limit",
    "LIMIT_PERCENT": "Limit",
    "DUMMY_SCAN": "Result",
    "FILTER": "Result",
    "UNION": "Append",
    "CTE_SCAN": "CTE Scan",
    "DELIM_SCAN": "CTE Scan",
    "INSERT": "ModifyTable",
    "UPDATE": "ModifyTable",
    "DELETE": "ModifyTable",
}
_STRATEGY = {
    "HASH_GROUP_BY": "Hashed",
    "PERFECT_HASH_GROUP_BY": "Hashed",
    "UNGROUPED_AGGREGATE": "Plain",
    "SIMPLE_AGGREGATE": "Plain",
}
_OPERATION = {"INSERT": "Insert", "UPDATE": "Update", "DELETE": "Delete"}
_FOLDED = {"PROJECTION", "EXPLAIN_ANALYZE", "RESULT_COLLECTOR"}


def _name(raw: dict[str, Any]) -> str:
    return str(raw.get("name") or raw.get("operator_type") or raw.get("operator_name") or "")


def _node_type(op: str) -> str:
    return _NODE_TYPES.get(op) or op.replace("_", " ").title()


def _node(raw: dict[str, Any], analyze: bool) -> dict[str, Any]:
    """One plan node and those below it, PostgreSQL's field names first."""
    children = [c for c in raw.get("children") or [] if isinstance(c, dict)]
    op = _name(raw).strip()
    info = raw.get("extra_info") if isinstance(raw.get("extra_info"), dict) else {}
    if op in _FOLDED and len(children) == 1:
        below = _node(children[0], analyze)
        if info:  # what it computed stays readable, with the node it is folded into
            below["DuckDB"].setdefault("Folded", []).insert(0, {"Operator": op, **info})
        return below
    out: dict[str, Any] = {"Node Type": _node_type(op)}
    if op in _STRATEGY:
        out["Strategy"] = _STRATEGY[op]
    if op in _OPERATION:
        out["Operation"] = _OPERATION[op]
    table = info.get("Table")
    if isinstance(table, str) and table:
        parts = table.split(".")
        out["Relation Name"] = parts[-1]
        if len(parts) > 1:
            out["Schema"] = "public" if parts[-2] == "main" else parts[-2]
    filters = info.get("Filters")
    if isinstance(filters, list):
        filters = " AND ".join(str(f) for f in filters)
    if isinstance(filters, str) and filters:
        out["Filter"] = filters  # DuckDB's words for it
    join = info.get("Join Type")
    if isinstance(join, str) and join:
        out["Join Type"] = join.title()
    estimated = info.get("Estimated Cardinality")
    if isinstance(estimated, (int, str)) and str(estimated).lstrip("~").isdigit():
        out["Plan Rows"] = int(str(estimated).lstrip("~"))
    plans = [_node(c, analyze) for c in children]
    if analyze:
        out["Actual Rows"] = int(raw.get("operator_cardinality") or 0)
        out["Actual Loops"] = 1
        own = float(raw.get("operator_timing") or 0.0) * 1000.0
        below = sum(p.get("Actual Total Time", 0.0) for p in plans)
        out["Actual Total Time"] = round(own + below, 3)
    if plans:
        out["Plans"] = plans
    out["DuckDB"] = {"Operator": op, **{k: v for k, v in info.items() if k != "Table"}}
    return out


def postgres_plan(duck_json: str, analyze: bool) -> str:
    """DuckDB's JSON plan (EXPLAIN or EXPLAIN ANALYZE) as PostgreSQL's FORMAT JSON text;
    the input unchanged when it is not a plan this knows."""
    try:
        doc = json.loads(duck_json)
    except ValueError:
        return duck_json
    if isinstance(doc, list) and len(doc) == 1 and isinstance(doc[0], dict):
        root = doc[0]
    elif isinstance(doc, dict):
        root = doc
    else:
        return duck_json
    if "children" in root and not _name(root):  # EXPLAIN ANALYZE: the query's profile
        children = [c for c in root["children"] if isinstance(c, dict)]
        if len(children) != 1:
            return duck_json
        entry: dict[str, Any] = {"Plan": _node(children[0], analyze=True)}
        entry["Execution Time"] = round(float(root.get("latency") or 0.0) * 1000.0, 3)
        return json.dumps([entry], indent=2)
    if not _name(root):
        return duck_json
    return json.dumps([{"Plan": _node(root, analyze)}], indent=2)
