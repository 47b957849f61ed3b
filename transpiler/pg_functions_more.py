"""More PostgreSQL built-ins DuckDB lacks or answers differently, by the shape of the
call; the macros called are in proxy/db/catalog/83_pg_functions_more.sql.

- `sha224` / `sha384` / `sha512(bytea)`: sqlglot writes every sha2 as DuckDB's SHA256
  (a silently different hash);
- `round(x)` of a double precision rounds half to even (__hati_round);
- `div(a, b)`: numeric of scale 0 truncated toward zero (sqlglot: CAST(a // b AS DECIMAL),
  DuckDB's bare DECIMAL is (18,3): 3.000);
- `concat(VARIADIC arr)` / `concat_ws(sep, VARIADIC arr)`: the array's elements, NULLs
  skipped (DuckDB concatenated the array's text);
- `extract(julian FROM date)`: numeric (DuckDB's double printed `2460317.0`);
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
        "unistr",
        "jsonb_path_query",
        "jsonb_path_query_array",
        "jsonb_path_query_first",
        "jsonb_path_exists",
    }
)
_SHA = {384: "__hati_sha384", 512: "__hati_sha512"}
# the macros above by their PostgreSQL names, for stored text (stored_text.py: a default,
# CHECK or view shows what the user wrote)
STORED_NAMES = {
    "round": "round",
    "sha384": "sha384",
    "sha512": "sha512",
    "div_numeric": "div",
    "bytea_substring": "substring",
}
# what makes a statement worth this pass (token_flags.PG_WORDS)
TRIGGER_WORDS = frozenset(
    {"SHA384", "SHA512", "ROUND", "DIV", "VARIADIC", "||", "SUBSTRING", "JULIAN"}
)
_INT_BITS = {exp.DType.INT: 32, exp.DType.BIGINT: 64}


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def handles(node: exp.Expr) -> bool:
    if isinstance(node, exp.SHA2Digest):
        length = node.args.get("length")
        return isinstance(length, exp.Literal) and int(length.this) in _SHA
    if isinstance(node, exp.Round):
        return node.args.get("decimals") is None
    if isinstance(node, exp.Cast):
        if isinstance(node.this, exp.HexString):  # x'1F'::int
            bits = _INT_BITS.get(node.to.this)
            return bits is not None and 4 * len(node.this.name) <= bits
        return isinstance(node.this, exp.IntDiv) and node.to.this is exp.DType.DECIMAL
    if isinstance(node, exp.Substring):
        return _is_bytea(node.this)
    if isinstance(node, exp.Extract):  # date_part('julian', x) stays double precision
        field = node.this
        return (
            isinstance(field, exp.Var)
            and field.name.upper() == "JULIAN"
            and not node.meta.get("date_part")
        )
    if isinstance(node, (exp.Concat, exp.ConcatWs)):
        return any(isinstance(a, exp.Variadic) for a in node.expressions)
    return False


def rewrite(node: exp.Expr) -> None:
    if isinstance(node, exp.SHA2Digest):
        node.replace(_call(_SHA[int(node.args["length"].this)], node.this.copy()))
    elif isinstance(node, exp.Round):
        node.replace(_call("__hati_round", node.this.copy()))
    elif isinstance(node, exp.Cast) and isinstance(node.this, exp.HexString):
        node.replace(exp.Literal.number(_bit_string_int(node.this.name, _INT_BITS[node.to.this])))
    elif isinstance(node, exp.Extract):
        node.replace(_call("__hati_extract_julian", node.expression.copy()))
    elif isinstance(node, exp.Substring):
        args = [node.this.copy(), (node.args.get("start") or exp.Literal.number(1)).copy()]
        if node.args.get("length") is not None:
            args.append(node.args["length"].copy())
        node.replace(_call("__hati_bytea_substring", *args))
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


def _is_bytea(node: exp.Expr) -> bool:
    """A bytea literal (already unhex(...): children are rewritten first) or cast."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower() == "unhex"
    return isinstance(node, exp.Cast) and node.to.this is exp.DType.VARBINARY


def _bit_string_int(digits: str, bits: int) -> int:
    """A bit string of at most `bits` bits as the integer PostgreSQL's cast gives: zero
    extended, a full-width one read as two's complement (x'FFFFFFFF'::int is -1)."""
    value = int(digits or "0", 16)
    if 4 * len(digits) == bits and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value
