"""More PostgreSQL built-ins DuckDB lacks or answers differently, by the shape of the
call; the macros called are in proxy/db/catalog/83_pg_functions_more.sql.

- `sha224` / `sha384` / `sha512(bytea)`: sqlglot writes every sha2 as DuckDB's SHA256
  (a silently different hash);
- `round(x)` of a double precision rounds half to even (__hati_round);
- `div(a, b)`: numeric of scale 0 truncated toward zero (sqlglot: CAST(a // b AS DECIMAL),
  DuckDB's bare DECIMAL is (18,3): 3.000);
- `concat(VARIADIC arr)` / `concat_ws(sep, VARIADIC arr)`: the array's elements, NULLs
  skipped (DuckDB concatenated the array's text);
- MISSING: names DuckDB lacks, called as `__hati_<name>` (pgcompat.MISSING_PG_FUNCTIONS).
"""

from __future__ import annotations

from sqlglot import exp

MISSING = frozenset(
    {
        "has_sequence_privilege",
        "array_ndims",
        "cardinality",
        "array_dims",
        "array_fill",
        "string_to_table",
        "get_byte",
        "set_byte",
        "pg_jit_available",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_last_xact_replay_timestamp",
        "row_security_active",
        "pg_stat_reset",
        "pg_try_advisory_xact_lock",
        "sha224",
    }
)
_SHA = {384: "__hati_sha384", 512: "__hati_sha512"}
# what makes a statement worth this pass (token_flags.PG_WORDS)
TRIGGER_WORDS = frozenset({"SHA384", "SHA512", "ROUND", "DIV", "VARIADIC"})


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def handles(node: exp.Expr) -> bool:
    if isinstance(node, exp.SHA2Digest):
        length = node.args.get("length")
        return isinstance(length, exp.Literal) and int(length.this) in _SHA
    if isinstance(node, exp.Round):
        return node.args.get("decimals") is None
    if isinstance(node, exp.Cast):
        return isinstance(node.this, exp.IntDiv) and node.to.this is exp.DType.DECIMAL
    if isinstance(node, (exp.Concat, exp.ConcatWs)):
        return any(isinstance(a, exp.Variadic) for a in node.expressions)
    return False


def rewrite(node: exp.Expr) -> None:
    if isinstance(node, exp.SHA2Digest):
        node.replace(_call(_SHA[int(node.args["length"].this)], node.this.copy()))
    elif isinstance(node, exp.Round):
        node.replace(_call("__hati_round", node.this.copy()))
    elif isinstance(node, exp.Cast):
        quotient = node.this
        node.replace(_call("__hati_div_numeric", quotient.this.copy(), quotient.expression.copy()))
    elif isinstance(node, (exp.Concat, exp.ConcatWs)):
        _concat_variadic(node)


def _concat_variadic(node: exp.Concat | exp.ConcatWs) -> None:
    args = list(node.expressions)
    sep = args[0] if isinstance(node, exp.ConcatWs) else exp.Literal.string("")
    last = args[-1]
    if not isinstance(last, exp.Variadic) or len(args) != (
        2 if isinstance(node, exp.ConcatWs) else 1
    ):
        return
    text = exp.cast(last.this.copy(), exp.DataType.build("VARCHAR[]"))
    node.replace(_call("array_to_string", text, sep.copy()))
