"""DuckDB's type errors in the SQL that semantic functions become, in the user's terms.

`semantic_rank(embedding, my_func(x))` runs as `array_cosine_similarity(embedding,
my_func(x))`; when the transpiler cannot tell that an argument is text (it has no
types), DuckDB fails with "No function matches ... array_cosine_similarity(FLOAT[384],
VARCHAR)", naming functions the user never wrote. Likewise `__HATI_EMBED__(col)` (the
per-row embedding, VARCHAR only) given a vector column the transpiler took for text.
"""

from __future__ import annotations

import re

from proxy.wire.errors import PgError

_CALL = re.compile(
    r"argument types '(array_cosine_similarity|array_cosine_distance|__HATI_EMBED__)\((.*)\)'"
)
_USAGE = "semantic_match / semantic_rank"


def semantic_type_error(message: str, position: int | None) -> PgError | None:
    """A clearer 42804 error for DuckDB's binder `message`, or None when it is another."""
    match = _CALL.search(message)
    if match is None:
        return None
    function, types = match.group(1), [t.strip() for t in match.group(2).split(",")]
    vectors = [t for t in types if t.endswith("]")]
    size = next((t for t in vectors if not t.endswith("[]")), "FLOAT[n]")
    detail = f"DuckDB: {message}"
    if function == "__HATI_EMBED__":
        if vectors:
            text = (
                f"{_USAGE}: a {types[0]} vector column was taken for text to embed (its "
                'table could not be told and its name has no "embed" or "vec" in it)'
            )
            hint = "Qualify the column with its table (t.col) so its type is known."
        else:
            text = f"{_USAGE}: cannot embed a {types[0]}: the argument must be text or a vector"
            hint = f"Cast it: CAST(x AS TEXT) to embed its text, or x::{size} for a vector."
        return PgError("42804", text, detail=detail, hint=hint, position=position)
    others = [t for t in types if not t.endswith("]")]
    if others:
        text = (
            f"{_USAGE}: an argument is {others[0]}; each argument must be text or a FLOAT[] vector"
        )
        hint = (
            "Text the transpiler cannot recognise as text (e.g. from a function it does not "
            f"know) is not embedded: write CAST(... AS TEXT) around it; cast a vector to {size}."
        )
    else:
        text = f"{_USAGE}: the vectors ({', '.join(types)}) must both be FLOAT[n] of one size"
        hint = f"Cast the vector: x::{size}."
    return PgError("42804", text, detail=detail, hint=hint, position=position)
